"""The texts the notebooks' figures draw in Chinese, and those that data/zh/plots.json leaves in English.

    python tools/zh_plot_texts.py                                   # every English notebook: what is left untranslated
    python tools/zh_plot_texts.py notebooks/03_feed_forward.ipynb --all   # every text drawn, with its Chinese
    python tools/zh_plot_texts.py --json build/zh_plot_texts.json   # also write what was drawn, per notebook
    python tools/zh_plot_texts.py --png build/zh_figures             # and keep each figure, to look at

Each notebook runs in a fresh interpreter, as the zh notebook would: its code cells in order (in notebooks/, as
nbval runs them, the Agg backend, printed output dropped), with ``use_language("zh")`` after the first code cell;
after each cell every open figure is saved as the inline backend saves it (PNG, ``bbox_inches="tight"``), so each
text is measured and drawn, then closed. The report lists each text left with English words (with the notebook
and cell that drew it), each glyph the font lacks ("Glyph ... missing": run ``make cjk-font``) and each cell that
failed. Exit status 1 when any of them is left. No notebook is written.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


def run_notebook(path: Path, png: Path | None = None) -> dict[str, Any]:
    """Run one notebook's code cells in this interpreter, in Chinese; what its figures drew (a JSON-able dict).

    ``png``: a folder where each figure is also saved, as ``<notebook>-<code cell>-<figure>.png``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sys.path.insert(0, str(ROOT))
    from helpers.plots import language, use_language

    cells = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    drawn: dict[str, dict[str, Any]] = {}  # English text -> its Chinese and the cells that drew it
    current = {"cell": -1}
    translate = language.translate

    def recording(text: str) -> str:
        chinese = translate(text)
        entry = drawn.setdefault(text, {"zh": chinese, "cells": []})
        if current["cell"] not in entry["cells"]:
            entry["cells"].append(current["cell"])
        return chinese

    language.translate = recording  # the drawing wrapper looks it up at each call
    errors, glyphs = [], set()
    namespace: dict[str, Any] = {"__name__": "__main__"}
    os.chdir(path.parent)
    start = time.perf_counter()
    for n, cell in enumerate(cells):
        current["cell"] = n
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(compile(source, f"{path.name}[{n}]", "exec"), namespace)
                    for k, number in enumerate(plt.get_fignums()):
                        target = png / f"{path.stem}-{n:02d}-{k}.png" if png else io.BytesIO()
                        plt.figure(number).savefig(target, format="png", bbox_inches="tight")
            except Exception as error:  # noqa: BLE001 - report it and go on: later cells may still draw
                errors.append(f"code cell {n}: {type(error).__name__}: {str(error)[:300]}")
            finally:
                plt.close("all")
        glyphs |= {str(w.message) for w in caught if "missing from font" in str(w.message)}
        if n == 0:
            use_language("zh")
    untranslated = set(language.untranslated())
    return {"notebook": path.name, "seconds": round(time.perf_counter() - start, 1), "errors": errors,
            "glyphs": sorted(glyphs),
            "texts": [{"en": en, **entry, "untranslated": en in untranslated} for en, entry in drawn.items()]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", type=Path, nargs="*", help="English notebooks (default: notebooks/*.ipynb)")
    parser.add_argument("--all", action="store_true", help="print every text drawn and its Chinese")
    parser.add_argument("--json", type=Path, help="write every notebook's texts here")
    parser.add_argument("--png", type=Path, help="save every figure here, as PNG")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    notebooks = [p.resolve() for p in args.notebooks] or sorted(NOTEBOOKS.glob("*.ipynb"))
    if args.worker:
        print(json.dumps(run_notebook(notebooks[0], args.png), ensure_ascii=False))
        return 0
    reports, problems = [], 0
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONHASHSEED": "0"}
    png = ["--png", str(args.png.resolve())] if args.png else []
    if args.png:
        args.png.mkdir(parents=True, exist_ok=True)
    for nb in notebooks:
        result = subprocess.run([sys.executable, __file__, "--worker", str(nb), *png], capture_output=True, text=True,
                                cwd=ROOT, env=env)
        if result.returncode:
            print(f"{nb.name}: the run failed\n{result.stderr[-2000:]}")
            problems += 1
            continue
        report = json.loads(result.stdout.strip().splitlines()[-1])
        reports.append(report)
        left = [t for t in report["texts"] if t["untranslated"]]
        problems += len(left) + len(report["glyphs"]) + len(report["errors"])
        print(f"{nb.name}: {len(report['texts'])} texts drawn, {len(left)} left in English, "
              f"{len(report['glyphs'])} missing glyphs, {len(report['errors'])} failed cells ({report['seconds']} s)")
        for t in report["texts"] if args.all else left:
            mark = "  LEFT " if t["untranslated"] else "       "
            print(f"{mark}cells {t['cells']}: {t['en']!r} -> {t['zh']!r}")
        for line in report["glyphs"] + report["errors"]:
            print(f"  {line}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(reports, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{problems} problem(s)" if problems else "every text the figures draw is in Chinese")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
