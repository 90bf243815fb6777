"""Time a 1,000-node graph written in every picture format, and the page opened in Chromium.

    python bench/pictures.py            (the browser part needs chromium, chromedriver, selenium)
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

import ddx
from ddx.graph.record import ancestors
from ddx.out.pictures import write_graph


def main() -> None:
    expr = " + ".join(f"sin(x*{i}) * w" for i in range(1, 251))
    t = ddx.Trace(expr, {"x": 0.5, "w": 2}, lean=False)
    t.backward()
    print(f"nodes: {len(ancestors(t.output))}")
    folder = Path(tempfile.mkdtemp(prefix="ddx-bench-"))
    formats = ["dot", "mmd", "html"] + (["svg", "png"] if shutil.which("dot") else [])
    for suffix in formats:
        path = folder / f"big.{suffix}"
        start = time.perf_counter()
        write_graph(t, str(path))
        print(f"{suffix:5} {time.perf_counter() - start:6.3f} s  {path.stat().st_size:>9,} bytes")
    if shutil.which("chromedriver") and "--no-browser" not in sys.argv:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service

        opts = Options()
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,900"):
            opts.add_argument(arg)
        driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)
        try:
            url = (folder / "big.html").as_uri()
            driver.get("about:blank")
            start = time.perf_counter()
            driver.get(url)  # returns after the load event: the page has laid itself out
            ready = driver.execute_script("return document.body.dataset.ready")
            print(f"page open and laid out in Chromium: {time.perf_counter() - start:.3f} s "
                  f"(ready={ready})")
            start = time.perf_counter()
            driver.find_element("id", "unfold-all").click()
            n = driver.execute_script("return document.querySelectorAll('.node[data-id]').length")
            print(f"unfold all ({n} nodes laid out): {time.perf_counter() - start:.3f} s")
        finally:
            driver.quit()


if __name__ == "__main__":
    main()
