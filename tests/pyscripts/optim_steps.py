import torch
_ = torch.manual_seed(3)
for name, make in [("sgd", lambda p: torch.optim.SGD(p, lr=0.05)),
                   ("mom", lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, weight_decay=0.01)),
                   ("nes", lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True)),
                   ("adam", lambda p: torch.optim.Adam(p, lr=0.01)),
                   ("adamw", lambda p: torch.optim.Adam(p, lr=0.01, betas=(0.8, 0.99), weight_decay=0.1))]:
    w = torch.randn(37, requires_grad=True)
    opt = make([w])
    for step in range(5):
        opt.zero_grad()
        w.grad = torch.randn(37)
        opt.step()
    print(name, w.tolist())
