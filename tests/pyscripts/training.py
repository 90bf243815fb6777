import torch
x = torch.linspace(-1.0, 1.0, 20, dtype=torch.float64)
y = 3.0 * x + 0.5
w = torch.zeros(1, dtype=torch.float64, requires_grad=True)
b = torch.zeros(1, dtype=torch.float64, requires_grad=True)
learning_rate = 0.1
for t in range(50):
    y_pred = w * x + b
    loss = ((y_pred - y) ** 2).mean()
    if t % 10 == 9:
        print(t, round(loss.item(), 6))
    loss.backward()
    with torch.no_grad():
        w -= learning_rate * w.grad
        b -= learning_rate * b.grad
        w.grad.zero_()
        b.grad = None
print(f"w={w.item():.4f} b={b.item():.4f}")
params = [w, b]
for p in params:
    print(p.requires_grad, p.is_leaf, p.grad)
