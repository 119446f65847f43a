"""The maintainers' tools: the offline decks and pages (``build_site.py``, ``sitekit.py``, the ``*.html.j2``
templates), the cheatsheet (``cheatsheet.py``), the Chinese edition (``zh.py``, ``zh_plot_texts.py``), the GPU peak
checks (``check_peaks.py``, ``gpu_check.py``, ``peak_table.py``) and JupyterLab's settings (``lab_overrides.json``).

No part of ``helpers`` (what learners import); each script runs from the repository root (``python tools/zh.py check``,
the Makefile's targets), and the tests import them as ``from tools import zh``. ``.ci/`` holds only CI (``.ci/run``).
"""
