"""Build steps and browser checks for the offline slides and HTML pages (issue #6).

    python .ci/build_site.py index build/html/index.html notebooks/*.ipynb
    python .ci/build_site.py relink build/html .html notebooks/01_embeddings.ipynb
    python .ci/build_site.py screenshots --out build/screenshots notebooks/*.ipynb
    python .ci/build_site.py readme-image notebooks/00_overview.ipynb 'The same split as a picture' out.png

The Makefile runs these (``make html``, ``make slides-screenshots``, ``make readme-image``); the tests import
:func:`probe` and :func:`chromium` from here. What to expect from a deck and how to read what Chromium
showed are pure functions in ``.ci/sitekit.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Mapping

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / ".ci"))

from sitekit import (  # noqa: E402
    Dom, cell_positions, chromium_command, index_page, notebook_title, on_slides, page_requests, read_dom, relink,
    slide_hash, slide_layout, slide_type, slide_with_heading, source, with_probe,
)

SERIES_TITLE = "How many parameters does a Transformer have?"
SLIDE_HEIGHT = 800  # the decks are 1280 x 800 (make slides: --SlidesExporter.reveal_width/height)
SLIDE_WIDTH = 1280


def chromium() -> str:
    """The Chromium binary: $CHROMIUM, else `chromium` on PATH; raises when there is none (`make test` installs it)."""
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).is_file():
        raise FileNotFoundError(f"no Chromium at {path}: run `make test` (it installs the Debian package "
                                "`chromium`) or `apt-get install -y chromium`, or set CHROMIUM=/path/to/chromium")
    return path


def run(argv: list[str], timeout: float = 120) -> str:
    """Run Chromium; return its stdout (the dumped DOM), raising with its stderr when it fails."""
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited with {result.returncode}:\n{result.stderr[-3000:]}")
    return result.stdout


def probe(page: Path, config: Mapping[str, Any], budget_ms: int = 5000, fragment: str = "") -> tuple[Dom, list[str]]:
    """Open a probed copy of ``page`` in headless Chromium without network.

    Returns the DOM it ended with (``Dom.probe`` holds what the probe recorded) and the URLs the page
    asked the network for (from Chromium's net log; should be none).
    """
    page = page.resolve()
    with tempfile.TemporaryDirectory(prefix="site-probe-") as tmp:
        copy = Path(tmp) / page.name
        copy.write_text(with_probe(page.read_text(encoding="utf-8"), page.parent.as_uri() + "/", config), encoding="utf-8")
        netlog = Path(tmp) / "netlog.json"
        argv = chromium_command(chromium(), copy.as_uri() + fragment, str(Path(tmp) / "profile"),
                                budget_ms=budget_ms, netlog=str(netlog))
        dom = read_dom(run(argv))
        requests = page_requests(json.loads(netlog.read_text()))
    return dom, requests


def screenshot(page: Path, fragment: str, png: Path, budget_ms: int = 3000, size: tuple[int, int] = (1280, 800)) -> Path:
    """A ``size`` screenshot of ``page`` opened at ``fragment`` (e.g. ``#/3/1``), without network."""
    png.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="site-shot-") as tmp:
        run(chromium_command(chromium(), page.resolve().as_uri() + fragment, str(Path(tmp) / "profile"),
                             budget_ms=budget_ms, screenshot=str(png.resolve()), window=size))
    if not png.is_file():
        raise RuntimeError(f"Chromium wrote no screenshot for {page}{fragment}")
    return png


def build_index(out: Path, notebooks: list[Path]) -> None:
    """Write the HTML index: every notebook's page, in reading order (file name order), with its title."""
    pages = [(f"{nb.stem}.html", notebook_title(json.loads(nb.read_text(encoding="utf-8")))) for nb in sorted(notebooks)]
    text = index_page(SERIES_TITLE, pages)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not out.is_file() or out.read_text(encoding="utf-8") != text:
        out.write_text(text, encoding="utf-8")


def relink_pages(folder: Path, suffix: str, notebooks: list[Path]) -> None:
    """Point the links between notebooks in the pages built from ``notebooks`` at the built pages."""
    for nb in notebooks:
        page = folder / f"{nb.stem}{suffix}"
        text = page.read_text(encoding="utf-8")
        new = relink(text, suffix)
        if new != text:
            page.write_text(new, encoding="utf-8")


def first_line(cell: Mapping[str, Any]) -> str:
    """A cell's first non-empty source line, shortened, to name a slide in the review."""
    line = next((ln.strip() for ln in source(cell).splitlines() if ln.strip()), "")
    return line if len(line) <= 60 else line[:57] + "..."


def review(nb_path: Path, deck: Path, out: Path) -> list[str]:
    """Screenshot every subslide of one deck (fragments revealed) and measure it; return the report lines."""
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    layout = slide_layout(nb)
    dom, requests = probe(deck, {"deck": True, "measure": True})
    sizes = {(s["h"], s["v"]): s for s in dom.probe.get("slides", [])}
    cells: dict[tuple[int, int], list[int]] = {}
    for i, (cell, pos) in enumerate(zip(nb["cells"], cell_positions(nb))):
        if pos is not None and on_slides(cell) and slide_type(cell) != "notes":
            cells.setdefault(pos, []).append(i)
    lines = [f"{deck.name}: {len(layout)} slides, {sum(map(len, layout))} subslides"
             + ("" if dom.ready else "  NOT STARTED") + "".join(f"  NETWORK {u}" for u in requests)
             + "".join(f"  ERROR {e}" for e in dom.probe.get("errors", []))]
    for h, subslides in enumerate(layout):
        for v, fragments in enumerate(subslides):
            fragment = slide_hash(h, v, fragments)
            png = screenshot(deck, fragment, out / nb_path.stem / f"{h:02d}_{v}.png")
            size = sizes.get((h, v), {})
            problems = [f"cut off: {c}" for c in size.get("clipped", [])]
            if size.get("height", 0) > SLIDE_HEIGHT:
                problems.insert(0, f"too tall: {size['height']} px > {SLIDE_HEIGHT}")
            if size.get("width", 0) > SLIDE_WIDTH:
                problems.insert(0, f"too wide: {size['width']} px > {SLIDE_WIDTH}")
            here = cells.get((h, v), [])
            name = first_line(nb["cells"][here[0]]) if here else "?"
            lines.append(f"  {fragment:<10} {size.get('height', '?'):>5} px  cells {','.join(map(str, here))}  "
                         f"[{name}]  {'; '.join(problems) or 'ok'}  -> {png.relative_to(out)}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("index", help="write the HTML index page")
    p.add_argument("out", type=Path)
    p.add_argument("notebooks", type=Path, nargs="*")
    p = sub.add_parser("relink", help="point links to .ipynb files at the built pages")
    p.add_argument("folder", type=Path)
    p.add_argument("suffix", help=".html or .slides.html")
    p.add_argument("notebooks", type=Path, nargs="*")
    p = sub.add_parser("screenshots", help="screenshot and measure every subslide of every deck")
    p.add_argument("--out", type=Path, default=ROOT / "build" / "screenshots")
    p.add_argument("--decks", type=Path, default=ROOT / "build" / "slides")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    p.add_argument("notebooks", type=Path, nargs="+")
    p = sub.add_parser("readme-image", help="the slide with a given heading as a 1280x800 PNG")
    p.add_argument("notebook", type=Path)
    p.add_argument("heading", help="a Markdown heading on the slide, without the #")
    p.add_argument("out", type=Path)
    p.add_argument("--decks", type=Path, default=ROOT / "build" / "slides")
    args = parser.parse_args(argv)

    if args.command == "index":
        build_index(args.out, args.notebooks)
    elif args.command == "relink":
        relink_pages(args.folder, args.suffix, args.notebooks)
    elif args.command == "screenshots":
        def one(nb: Path) -> list[str]:
            return review(nb, args.decks / f"{nb.stem}.slides.html", args.out)
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            reports = list(pool.map(one, sorted(args.notebooks)))
        text = "\n".join(line for lines in reports for line in lines) + "\n"
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "report.txt").write_text(text, encoding="utf-8")
        print(text, end="")
        print(f"screenshots and report.txt under {args.out}")
    elif args.command == "readme-image":
        fragment = slide_with_heading(json.loads(args.notebook.read_text(encoding="utf-8")), args.heading)
        screenshot(args.decks / f"{args.notebook.stem}.slides.html", fragment, args.out)
        print(f"wrote {args.out} ({args.notebook.stem}{fragment})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
