"""Build steps and browser checks for the offline slides and HTML pages.

    python tools/build_site.py index build/html/index.html notebooks/*.ipynb
    python tools/build_site.py relink build/html .html notebooks/01_embeddings.ipynb
    python tools/build_site.py screenshots --out build/screenshots notebooks/*.ipynb
    python tools/build_site.py readme-image notebooks/00_overview.ipynb 'The same split as a picture' out.png
    python tools/build_site.py cheatsheet build/html/cheatsheet.html
    python tools/build_site.py cjk-font --copyright debian/copyright NotoSansCJK-Regular.ttc NotoSansCJK-Bold.ttc

The Makefile runs these (``make html``, ``make slides-screenshots``, ``make readme-image``); the tests import
:func:`probe` and :func:`chromium` from here. What to expect from a deck and how to read what Chromium
showed are pure functions in ``tools/sitekit.py``.
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
sys.path.insert(0, str(ROOT))  # helpers and tools, run as a script

from tools.sitekit import (  # noqa: E402
    SOLUTION_SUMMARY, ZH_SUFFIX, Dom, cell_positions, chromium_command, cjk_characters, glossary_page, index_page,
    lang_switch, notebook_title, on_slides, page_requests, read_dom, relink, slide_hash, slide_layout, slide_type,
    slide_with_heading, source, with_probe,
)

SERIES_TITLE = "How many parameters does a Transformer have?"
SERIES_TITLE_ZH = "Transformer 有多少参数？它们在哪里？"
CHEATSHEET = ("cheatsheet.html", "Cheatsheet: every rule of the series on one printable page")
GLOSSARY = ("glossary.html", "术语表：本系列的术语和符号（中英对照）")
ZH_EXTRAS = [GLOSSARY, (f"../html/{CHEATSHEET[0]}", "速查表（英文）：本系列的全部公式，一页打印")]
SWITCH_LABEL = {"en": "中文", "zh": "English"}
SLIDE_HEIGHT = 800  # the decks are 1280 x 800 (make slides: --SlidesExporter.reveal_width/height)
SLIDE_WIDTH = 1280

# The CJK font the decks and pages carry (declared with @font-face in tools/*_offline.html.j2, copied into
# build/fonts by the Makefile): Noto Sans CJK SC cut down to the characters the series uses (`make cjk-font`)
FONT_DIR = ROOT / "data" / "fonts"
CJK_FONTS = {"Regular": "NotoSansSC-Regular.subset.woff2", "Bold": "NotoSansSC-Bold.subset.woff2"}
# the same subsets as plain OpenType for matplotlib (FreeType reads no woff2): the zh notebooks' figures
# (helpers.plots.use_language("zh") registers them)
CJK_OPENTYPE = {"Regular": "NotoSansSC-Regular.subset.otf", "Bold": "NotoSansSC-Bold.subset.otf"}
CJK_FONT_NUMBER = 2  # in Noto's .ttc collections: 0 JP, 1 KR, 2 SC, 3 TC, 4 HK
# where the series' text lives: every CJK character in these files must be in the font
CJK_TEXT = ("notebooks/*.ipynb", "notebooks/*.md", "notebooks/zh/*.ipynb", "data/zh/*.md", "data/**/*.json", "tools/*.j2",
            "README.md")
NOTO_COPYRIGHT = "Copyright 2014-2021 Adobe (http://www.adobe.com/), with Reserved Font Name 'Source'."


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


def build_index(out: Path, notebooks: list[Path], lang: str = "en") -> None:
    """Write the HTML index: every notebook's page, in reading order (file name order), with its title.

    The Chinese index (``lang="zh"``, build/html-zh) adds the glossary page and the English cheatsheet."""
    pages = [(f"{nb.stem}.html", notebook_title(json.loads(nb.read_text(encoding="utf-8")))) for nb in sorted(notebooks)]
    if lang == "zh":
        text = index_page(SERIES_TITLE_ZH, pages, ZH_EXTRAS, lang="zh",
                          intro="中文版：按阅读顺序排列的笔记本，已执行，离线即可打开。")
    else:
        text = index_page(SERIES_TITLE, pages, [CHEATSHEET])
    write_if_changed(out, with_switch(text, out.name, lang))


def write_if_changed(out: Path, text: str) -> None:
    """Write ``text`` to ``out`` unless it already holds it (make's timestamps stay put)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    if not out.is_file() or out.read_text(encoding="utf-8") != text:
        out.write_text(text, encoding="utf-8")


def twin_href(name: str, lang: str) -> str:
    """The link from page ``name`` of the site in ``lang`` to the same page in the other language (its index when the
    other language has no such page: the 勘误表 is Chinese only, the cheatsheet English only)."""
    stem = name.removesuffix(".html")
    if lang == "en":
        has = (ROOT / "notebooks" / "zh" / f"{stem}.ipynb").is_file() or name == "index.html"
        return f"../html{ZH_SUFFIX}/{name if has else 'index.html'}"
    has = (ROOT / "notebooks" / f"{stem}.ipynb").is_file() or name == "index.html"
    return f"../html/{name if has else 'index.html'}"


def with_switch(page: str, name: str, lang: str) -> str:
    """A page of the HTML site with its language switch (中文 on English pages, English on Chinese ones)."""
    return lang_switch(page, twin_href(name, lang), SWITCH_LABEL[lang])


def relink_pages(folder: Path, suffix: str, notebooks: list[Path], lang: str = "en", switch: bool = False) -> None:
    """Point the links between notebooks in the pages built from ``notebooks`` at the built pages; for the HTML
    site (``switch``) add the language switch, and on Chinese pages label the folded solutions in Chinese."""
    for nb in notebooks:
        page = folder / f"{nb.stem}{suffix}"
        text = page.read_text(encoding="utf-8")
        new = relink(text, suffix)
        if lang != "en":
            new = new.replace(f"<summary>{SOLUTION_SUMMARY['en']}</summary>", f"<summary>{SOLUTION_SUMMARY[lang]}</summary>")
        if switch:
            new = with_switch(new, page.name, lang)
        if new != text:
            page.write_text(new, encoding="utf-8")


def build_glossary(out: Path) -> None:
    """Write the glossary page (data/glossary.zh.json) of the Chinese site, with its language switch."""
    data = json.loads((ROOT / "data" / "glossary.zh.json").read_text(encoding="utf-8"))
    text = glossary_page(GLOSSARY[1], "中文版的每个术语只用一个译名；笔记本、勘误表和这一页都取自 data/glossary.zh.json。",
                         data["terms"])
    write_if_changed(out, with_switch(text, out.name, "zh"))


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


def series_cjk_characters(root: Path = ROOT) -> set[str]:
    """Every CJK character in the series' notebooks (the zh ones too, outputs included), translations, data files (the
    figures' dictionary data/zh/plots.json too), templates and README."""
    files = sorted({f for pattern in CJK_TEXT for f in root.glob(pattern) if f.is_file()})
    return set().union(*(cjk_characters(f.read_text(encoding="utf-8")) for f in files))


def font_characters(font_file: Path) -> set[str]:
    """The characters a font file (woff2 too) maps to a glyph: its best cmap."""
    from fontTools.ttLib import TTFont  # a dev dependency, needed only here

    with TTFont(str(font_file), lazy=True) as font:
        return {chr(code) for code in font.getBestCmap()}


def subset_font(source: Path, font_number: int, chars: set[str], out: Path, flavor: str | None = "woff2") -> None:
    """Write ``out``: face ``font_number`` of ``source`` with only ``chars``, the same bytes on every run: woff2 (the
    browsers'), or plain OpenType with ``flavor=None`` (matplotlib's)."""
    from fontTools import subset

    options = subset.Options()
    options.flavor = flavor
    options.font_number = font_number
    options.layout_features = ["*"]  # keep the punctuation's positioning
    options.name_IDs = ["*"]  # keep the copyright, trademark and licence records
    options.notdef_outline = True
    font = subset.load_font(str(source), options, dontLoadGlyphNames=True)
    font.recalcTimestamp = False
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(map(ord, chars)))
    subsetter.subset(font)
    out.parent.mkdir(parents=True, exist_ok=True)
    subset.save_font(font, str(out), options)
    font.close()


def ofl_text(debian_copyright: str, fonts: list[Path]) -> str:
    """OFL.txt for data/fonts: the notice, what was cut from what, and the licence from the Debian package's copyright."""
    stanza = debian_copyright.split("\n\nLicense: SIL-1.1\n", 1)
    if len(stanza) != 2:
        raise ValueError("no 'License: SIL-1.1' stanza in the copyright file")
    body = stanza[1].split("\n\nLicense: ", 1)[0]
    lines = [ln[1:] if ln.startswith(" ") else ln for ln in body.splitlines()]
    licence = "\n".join("" if ln == "." else ln for ln in lines).strip("\n")
    made = "\n".join(f"  {names[w]} <- {f.name} (face {CJK_FONT_NUMBER}, Noto Sans CJK SC)"
                      for names in (CJK_FONTS, CJK_OPENTYPE) for w, f in zip(names, fonts))
    return (f"{NOTO_COPYRIGHT}\n\nNoto Sans CJK SC (https://github.com/notofonts/noto-cjk), from the Debian package\n"
            f"fonts-noto-cjk, cut down to the characters this series uses by `make cjk-font` (fontTools):\n{made}\n"
            f"The woff2 subsets (decks and pages) are declared under the family name \"Noto Sans SC subset\"; the\n"
            f"OpenType ones (the Chinese figures, for matplotlib) keep the font's own name, \"Noto Sans CJK SC\".\n\n"
            f"{licence}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("index", help="write the HTML index page")
    p.add_argument("out", type=Path)
    p.add_argument("notebooks", type=Path, nargs="*")
    p.add_argument("--lang", choices=("en", "zh"), default="en")
    p = sub.add_parser("glossary", help="write the glossary page of the Chinese site")
    p.add_argument("out", type=Path)
    p = sub.add_parser("switch", help="add the language switch to a page of the site")
    p.add_argument("page", type=Path)
    p.add_argument("--lang", choices=("en", "zh"), default="en")
    p = sub.add_parser("relink", help="point links to .ipynb files at the built pages")
    p.add_argument("--lang", choices=("en", "zh"), default="en")
    p.add_argument("--switch", action="store_true", help="add the language switch (the HTML site)")
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
    p = sub.add_parser("cheatsheet", help="write the one-page summary of every rule, computed by helpers")
    p.add_argument("out", type=Path)
    p = sub.add_parser("cjk-font", help="cut the CJK font down to the series' characters, into data/fonts")
    p.add_argument("regular", type=Path, help="NotoSansCJK-Regular.ttc")
    p.add_argument("bold", type=Path, help="NotoSansCJK-Bold.ttc")
    p.add_argument("--copyright", type=Path, required=True, help="the Debian package's copyright file (the OFL text)")
    p.add_argument("--out", type=Path, default=FONT_DIR)
    args = parser.parse_args(argv)

    if args.command == "index":
        build_index(args.out, args.notebooks, args.lang)
    elif args.command == "glossary":
        build_glossary(args.out)
    elif args.command == "switch":
        write_if_changed(args.page, with_switch(args.page.read_text(encoding="utf-8"), args.page.name, args.lang))
    elif args.command == "relink":
        relink_pages(args.folder, args.suffix, args.notebooks, args.lang, args.switch)
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
    elif args.command == "cheatsheet":
        from tools import cheatsheet  # imports helpers (no torch)

        text = cheatsheet.page(f"{SERIES_TITLE} The rules on one page", cheatsheet.rules())
        write_if_changed(args.out, with_switch(text, args.out.name, "en"))
    elif args.command == "cjk-font":
        chars = series_cjk_characters()
        for names, flavor in ((CJK_FONTS, "woff2"), (CJK_OPENTYPE, None)):
            for weight, source in zip(names, [args.regular, args.bold]):
                out = args.out / names[weight]
                subset_font(source, CJK_FONT_NUMBER, chars, out, flavor)
                missing = chars - font_characters(out)
                if missing:
                    raise SystemExit(f"{source} has no glyph for {''.join(sorted(missing))}")
                print(f"wrote {out}: {len(chars)} characters, {out.stat().st_size:,} bytes")
        text = ofl_text(args.copyright.read_text(encoding="utf-8"), [args.regular, args.bold])
        (args.out / "OFL.txt").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
