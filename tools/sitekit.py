"""The offline slides and HTML pages: what a deck should contain, and what a browser showed.

Used by ``make slides``, ``make html`` and ``make slides-screenshots`` (through ``tools/build_site.py``) and by
``tests/test_slides.py`` and ``tests/test_html.py``. Every function here is pure: it takes a notebook (the
dict that ``json.load`` gives) or text (a page, a DOM that headless Chromium dumped, a net log) and returns
data. Reading files and running Chromium is left to the callers. Nothing here imports torch.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any, Mapping, Sequence

SOLUTION_TAG = "solution"
HIDDEN = ("skip", "notes")  # slide types nbconvert leaves off the slides ("notes" go to the speaker view)

# Chromium flags for a headless run that cannot reach the network: names resolve nowhere and every
# http(s) request goes to a dead proxy, so a page that tries to load something external shows it.
CHROMIUM_FLAGS: tuple[str, ...] = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-popup-blocking",
    "--hide-scrollbars",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=http://127.0.0.1:9",
)


# Unicode blocks of Chinese, Japanese and Korean text (ideographs, their punctuation, kana, full-width forms):
# every character of the series in these blocks must be in the vendored font (data/fonts/, `make cjk-font`)
CJK_BLOCKS: tuple[tuple[int, int], ...] = (
    (0x2E80, 0x2FDF),  # radicals
    (0x3000, 0x30FF),  # CJK symbols and punctuation (、。《》), hiragana, katakana
    (0x3100, 0x312F),  # bopomofo
    (0x3190, 0x9FFF),  # kanbun ... CJK unified ideographs, extension A
    (0xF900, 0xFAFF),  # compatibility ideographs
    (0xFE30, 0xFE4F),  # compatibility forms
    (0xFF00, 0xFFEF),  # half-width and full-width forms (，：（）)
    (0x20000, 0x3FFFF),  # extensions B onwards
)


def cjk_characters(text: str) -> set[str]:
    """The characters of ``text`` that lie in :data:`CJK_BLOCKS`."""
    return {ch for ch in set(text) if any(lo <= ord(ch) <= hi for lo, hi in CJK_BLOCKS)}


def slide_type(cell: Mapping[str, Any]) -> str:
    """A cell's ``metadata.slideshow.slide_type``; ``"-"`` (continue the current slide) when unset."""
    return cell.get("metadata", {}).get("slideshow", {}).get("slide_type", "-") or "-"


def is_solution(cell: Mapping[str, Any]) -> bool:
    """True for an exercise's worked solution: a cell tagged ``"solution"``."""
    return SOLUTION_TAG in cell.get("metadata", {}).get("tags", [])


def source(cell: Mapping[str, Any]) -> str:
    """A cell's source as one string (nbformat stores a string or a list of lines)."""
    src = cell.get("source", "")
    return src if isinstance(src, str) else "".join(src)


def slide_layout(nb: Mapping[str, Any]) -> list[list[int]]:
    """The deck ``nbconvert --to slides`` builds from a notebook's slide metadata.

    One entry per horizontal slide (a top-level ``<section>``), listing for each of its vertical
    subslides the number of fragments it reveals step by step. Mirrors nbconvert's
    ``_RevealMetadataPreprocessor``: the first cell that is neither "skip" nor "notes" opens the
    first slide whatever its type; after it, "slide" opens a slide, "subslide" a subslide and
    "fragment" a fragment; "-", "skip" and "notes" open nothing.
    """
    types = [slide_type(c) for c in nb["cells"]]
    first = next((i for i, t in enumerate(types) if t not in HIDDEN), None)
    if first is None:
        raise ValueError("every cell is skip or notes: nbconvert cannot make a deck")
    layout = [[0]]
    for t in types[first + 1:]:
        if t == "slide":
            layout.append([0])
        elif t == "subslide":
            layout[-1].append(0)
        elif t == "fragment":
            layout[-1][-1] += 1
    return layout


def slide_hash(h: int, v: int, fragments: int = 0) -> str:
    """The reveal.js URL fragment of subslide ``(h, v)`` with its ``fragments`` all revealed: ``#/h/v/f``."""
    return f"#/{h}/{v}/{fragments - 1}" if fragments else f"#/{h}/{v}"


def slide_hashes(layout: Sequence[Sequence[int]]) -> list[str]:
    """:func:`slide_hash` of every subslide of a :func:`slide_layout`, in presentation order."""
    return [slide_hash(h, v, f) for h, subslides in enumerate(layout) for v, f in enumerate(subslides)]


def slide_with_heading(nb: Mapping[str, Any], heading: str) -> str:
    """The ``#/h/v[/f]`` fragment of the subslide whose Markdown has a heading ``heading`` (all fragments shown)."""
    layout = slide_layout(nb)
    for cell, pos in zip(nb["cells"], cell_positions(nb)):
        lines = source(cell).splitlines() if cell.get("cell_type") == "markdown" else []
        if pos is not None and slide_type(cell) not in HIDDEN and any(
                re.fullmatch(r"\s{0,3}#{1,6}\s+" + re.escape(heading) + r"\s*", ln) for ln in lines):
            return slide_hash(*pos, layout[pos[0]][pos[1]])
    raise ValueError(f"no slide with the heading {heading!r}")


def cell_positions(nb: Mapping[str, Any]) -> list[tuple[int, int] | None]:
    """For each cell, the ``(h, v)`` subslide that holds it in the deck; None before the first slide."""
    out: list[tuple[int, int] | None] = []
    h = v = -1
    for cell in nb["cells"]:
        t = slide_type(cell)
        if h < 0 and t not in HIDDEN:
            h, v = 0, 0
        elif h >= 0 and t == "slide":
            h, v = h + 1, 0
        elif h >= 0 and t == "subslide":
            v += 1
        out.append((h, v) if h >= 0 else None)
    return out


def notebook_title(nb: Mapping[str, Any]) -> str:
    """The text of the notebook's first Markdown heading, without ``#`` and inline markup."""
    for cell in nb["cells"]:
        if cell.get("cell_type") != "markdown":
            continue
        for line in source(cell).splitlines():
            m = re.match(r"\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                return re.sub(r"[*_`]", "", m.group(1)).strip()
    raise ValueError("no Markdown heading in the notebook")


def _strip_code(markdown: str) -> str:
    """Markdown without fenced code blocks and inline code spans (MathJax does not typeset those)."""
    markdown = re.sub(r"^(```|~~~).*?^\1", " | ", markdown, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", " | ", markdown)


def display_math(markdown: str) -> list[str]:
    """The ``$$ ... $$`` formulas of a Markdown text, outside code."""
    return re.findall(r"\$\$(.+?)\$\$", _strip_code(markdown), flags=re.S)


def on_slides(cell: Mapping[str, Any]) -> bool:
    """True for a cell that belongs in the deck (speaker notes included): not skipped, not a solution."""
    return slide_type(cell) != "skip" and not is_solution(cell)


def slide_cell_ids(nb: Mapping[str, Any]) -> list[str]:
    """The ids of the cells a deck shows or holds as speaker notes, in order (nbconvert's ``cell-id=`` anchors)."""
    return [c["id"] for c in nb["cells"] if on_slides(c)]


def deck_display_math(nb: Mapping[str, Any]) -> int:
    """How many ``$$`` formulas the notebook's Markdown cells put into its deck."""
    return sum(len(display_math(source(c))) for c in nb["cells"] if c.get("cell_type") == "markdown" and on_slides(c))


def page_display_math(nb: Mapping[str, Any]) -> int:
    """How many ``$$`` formulas the notebook's Markdown cells put into its HTML page (every cell)."""
    return sum(len(display_math(source(c))) for c in nb["cells"] if c.get("cell_type") == "markdown")


def normalize_text(text: str) -> str:
    """Whitespace collapsed to single spaces, typographic quotes and dashes made plain, lower case."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u2013", "-").replace("\u2014", "-")
    return " ".join(text.split()).lower()


def prose_runs(markdown: str, min_words: int = 5) -> list[str]:
    """Runs of at least ``min_words`` plain words in a Markdown text, normalized.

    Markup, formulas, code, links and punctuation other than ``, . ' -`` end a run, so a run reads
    the same in the Markdown source and in the text of the rendered page.
    """
    text = _strip_code(markdown)
    text = re.sub(r"\$\$.+?\$\$|\$[^$\n]+\$", "|", text, flags=re.S)
    text = re.sub(r"\]\([^)]*\)", "|", text)  # link targets
    text = re.sub(r"^\s*(?:[-*+]|\d+\.)\s+", "|", text, flags=re.M)  # list markers
    runs = []
    for chunk in re.split(r"[^A-Za-z0-9 ,.'\-\n]+|\s[-.]\s|\n\s*\n", text):
        words = normalize_text(chunk).strip(" ,.-").split()
        if len(words) >= min_words:
            runs.append(" ".join(words))
    return runs


def solution_runs(nb: Mapping[str, Any], min_words: int = 5) -> list[str]:
    """The prose runs of the notebook's solution cells: text that must not appear on the slides."""
    return [run for c in nb["cells"] if is_solution(c) for run in prose_runs(source(c), min_words)]


def notes_texts(nb: Mapping[str, Any]) -> list[tuple[tuple[int, int], str]]:
    """The speaker notes the notes plugin shows, as ``((h, v), markdown)`` per subslide.

    reveal.js 4 shows the first ``<aside class="notes">`` of the current subslide, so only the
    first "notes" cell of each subslide counts, and only if no fragment comes before it (a notes
    cell after a fragment cell belongs to that fragment and shows only while it is current).
    """
    out: list[tuple[tuple[int, int], str]] = []
    seen: set[tuple[int, int]] = set()
    fragment_at: set[tuple[int, int]] = set()
    for cell, pos in zip(nb["cells"], cell_positions(nb)):
        if pos is None:
            continue
        t = slide_type(cell)
        if t == "fragment":
            fragment_at.add(pos)
        if t == "notes" and pos not in seen and pos not in fragment_at:
            seen.add(pos)
            out.append((pos, source(cell)))
    return out


def relink(page: str, suffix: str) -> str:
    """Links to other notebooks (``href="01_embeddings.ipynb#x"``) pointed at their pages (``01_embeddings<suffix>#x``)."""
    return re.sub(r'href="([\w.-]+)\.ipynb(#[^"]*)?"', lambda m: f'href="{m.group(1)}{suffix}{m.group(2) or ""}"', page)


LANG_SWITCH_CLASS = "lang-switch"
# the zh pages' folder beside the English ones (build/html-zh, build/slides-zh): ../vendor and ../fonts still resolve
ZH_SUFFIX = "-zh"
SOLUTION_SUMMARY = {"en": "Solution (click to open)", "zh": "参考答案（点击展开）"}
FONT_FACES = """@font-face { font-family: "Noto Sans SC subset"; font-weight: 400; font-style: normal;
             src: url("../fonts/NotoSansSC-Regular.subset.woff2") format("woff2"); }
@font-face { font-family: "Noto Sans SC subset"; font-weight: 700; font-style: normal;
             src: url("../fonts/NotoSansSC-Bold.subset.woff2") format("woff2"); }"""


def lang_switch(page: str, href: str, label: str) -> str:
    """``page`` with a link to the same page in the other language, first thing in its body (replacing an old one)."""
    page = re.sub(rf'<nav class="{LANG_SWITCH_CLASS}".*?</nav>\n?', "", page, flags=re.S)
    nav = (f'<nav class="{LANG_SWITCH_CLASS}" style="position:fixed;top:0.4em;right:0.8em;z-index:1000;'
           f'font:14px sans-serif;background:#fff;padding:0.1em 0.4em;border:1px solid #ccc;border-radius:4px">'
           f'<a href="{html.escape(href)}">{html.escape(label)}</a></nav>\n')
    m = re.search(r"<body\b[^>]*>\n?", page)
    if not m:
        raise ValueError("no <body> in the page")
    return page[:m.end()] + nav + page[m.end():]


def simple_page(title: str, intro: str, body: str, lang: str = "en", css: str = "", width: str = "46em") -> str:
    """An offline HTML page of the site: a heading, one paragraph, then ``body``. A Chinese page (``lang="zh"``)
    declares the series' CJK font, as the notebook pages do."""
    fonts = FONT_FACES + "\n" if lang == "zh" else ""
    family = '"Noto Sans SC subset", sans-serif' if lang == "zh" else "sans-serif"
    return f"""<!DOCTYPE html>
<html lang="{'zh-CN' if lang == 'zh' else 'en'}">
<head>
<meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>
{fonts}body {{ font-family: {family}; max-width: {width}; margin: 3em auto; padding: 0 1em; line-height: 1.5; }}
{css}</style>
</head>
<body>
<h1>{html.escape(title)}</h1>
<p>{html.escape(intro)}</p>
{body}
</body>
</html>
"""


def index_page(series_title: str, pages: Sequence[tuple[str, str]], extras: Sequence[tuple[str, str]] = (),
               lang: str = "en", intro: str = "The notebooks in reading order, executed, as pages that need no network.") -> str:
    """An offline HTML index: ``pages`` as ``(href, title)`` in reading order, as a numbered list, then ``extras``."""
    items = "\n".join(f'  <li><a href="{html.escape(href)}">{html.escape(title)}</a></li>' for href, title in pages)
    more = "".join(f'\n<p><a href="{html.escape(href)}">{html.escape(title)}</a></p>' for href, title in extras)
    return simple_page(series_title, intro, f'<ol id="notebooks">\n{items}\n</ol>{more}', lang, "li { margin: 0.3em 0; }\n")


def glossary_page(title: str, intro: str, terms: Sequence[Mapping[str, Any]]) -> str:
    """The glossary (data/glossary.zh.json) as an offline HTML table: English, Chinese, symbol, config key."""
    rows = "\n".join(
        "<tr>" + "".join(f"<td>{html.escape(str(t.get(k) or ''))}</td>" for k in ("en", "zh", "symbol", "code")) + "</tr>"
        for t in terms)
    css = ("table { border-collapse: collapse; width: 100%; }\n"
           "th, td { border-bottom: 1px solid #ddd; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }\n"
           "td:nth-child(3), td:nth-child(4) { font-family: menlo, consolas, 'DejaVu Sans Mono', monospace; font-size: 0.9em; }\n")
    table = ('<table id="glossary">\n<thead><tr><th>English</th><th>中文</th><th>符号</th><th>配置键 / 模块名</th></tr></thead>\n'
             f"<tbody>\n{rows}\n</tbody>\n</table>")
    return simple_page(title, intro, table, "zh", css, width="60em")


def chromium_command(chromium: str, url: str, profile: str, *, budget_ms: int = 5000,
                     screenshot: str | None = None, window: tuple[int, int] = (1280, 800),
                     netlog: str | None = None) -> list[str]:
    """The argv for one headless Chromium run without network: dump the DOM, or take a screenshot.

    ``budget_ms`` is virtual time: Chromium runs timers as fast as it can and stops when the page
    has used that much, so a result does not depend on how busy the machine is.
    """
    argv = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--virtual-time-budget={budget_ms}",
            f"--window-size={window[0]},{window[1]}"]
    if netlog:
        argv.append(f"--log-net-log={netlog}")
    argv += [f"--screenshot={screenshot}"] if screenshot else ["--dump-dom"]
    return [*argv, url]


# Injected into a copy of a page by with_probe(); the copy keeps the page's base URL, so it loads
# exactly what the page loads. It records load failures and script errors, waits until reveal.js
# (when asked) and MathJax are done, measures every subslide (when asked), can press "S" to open
# the speaker view, and writes what it saw as JSON into <html data-probe="...">, which --dump-dom keeps.
PROBE_JS = r"""
(function () {
  var cfg = window.__PROBE_CONFIG__ || {};
  var log = {errors: [], ready: false, done: false};
  function save() { document.documentElement.setAttribute('data-probe', JSON.stringify(log)); }
  window.addEventListener('error', function (e) {
    var t = e.target;
    if (t && t !== window && (t.src || t.href)) { log.errors.push('failed to load ' + (t.src || t.href)); }
    else { log.errors.push('script error: ' + e.message); }
    save();
  }, true);
  window.addEventListener('unhandledrejection', function (e) {
    log.errors.push('unhandled rejection: ' + e.reason); save();
  });
  var consoleError = console.error;
  console.error = function () {
    log.errors.push('console.error: ' + Array.prototype.join.call(arguments, ' ')); save();
    return consoleError.apply(console, arguments);
  };
  save();
  if (location.search.indexOf('receiver') >= 0) { return; }  // a speaker-view preview of this page
  function measure() {
    var out = [];
    var tops = document.querySelectorAll('.reveal .slides > section');
    Array.prototype.forEach.call(tops, function (top, h) {
      var subs = top.querySelectorAll(':scope > section');
      if (!subs.length) { subs = [top]; }
      Array.prototype.forEach.call(subs, function (s, v) {
        var els = [top, s], saved = els.map(function (e) { return [e.style.display, e.hasAttribute('hidden')]; });
        els.forEach(function (e) { e.style.display = 'block'; e.removeAttribute('hidden'); });
        // a line of code or output wider than the box that clips it (or than the slide) is cut off
        var clipped = [], box = s.getBoundingClientRect(), k = s.offsetWidth / (box.width || 1);
        Array.prototype.forEach.call(s.querySelectorAll('pre'), function (pre) {
          var range = document.createRange(), clip = pre;
          range.selectNodeContents(pre);
          while (clip !== s && getComputedStyle(clip).overflowX === 'visible') { clip = clip.parentElement; }
          var text = range.getBoundingClientRect(), room = clip.getBoundingClientRect();
          if (text.right > room.right + 1) {
            var kind = pre.closest('.jp-InputArea') ? 'code' : pre.closest('.jp-OutputArea') ? 'output' : 'text';
            clipped.push(kind + ' line ' + Math.round(k * (text.right - room.left)) + ' px wide, room ' +
                         Math.round(k * (room.right - room.left)) + ' px');
          }
        });
        out.push({h: h, v: v, height: s.scrollHeight, width: s.scrollWidth, clipped: clipped});
        els.forEach(function (e, i) { e.style.display = saved[i][0]; if (saved[i][1]) { e.setAttribute('hidden', ''); } });
      });
    });
    return out;
  }
  function speaker(at) {
    location.hash = '#/' + at[0] + '/' + at[1];
    setTimeout(function () {
      document.dispatchEvent(new KeyboardEvent('keydown', {key: 's', keyCode: 83, which: 83, bubbles: true}));
      setTimeout(function () {
        var w = window.open('', 'reveal.js - Notes'), d = w && w.document;
        var v = d && d.querySelector('.speaker-controls-notes .value');
        log.speaker = {title: d ? d.title : '', previews: d ? d.querySelectorAll('iframe').length : 0,
                       notes: v ? v.textContent : ''};
        log.done = true; save();
      }, 3000);
    }, 300);
  }
  // cfg.fonts: font families declared with @font-face whose every face must load (from the page's own files);
  // loading starts as soon as the document is parsed, beside reveal.js and MathJax
  var fontsLoaded = new Promise(function (resolve) {
    if (!cfg.fonts) { resolve(); return; }
    document.addEventListener('DOMContentLoaded', function () {
      var faces = [], name = function (f) { return f.family.replace(/^["']|["']$/g, ''); };
      if (document.fonts) {
        document.fonts.forEach(function (f) { if (cfg.fonts.indexOf(name(f)) >= 0) { faces.push(f); } });
      }
      Promise.all(faces.map(function (f) {
        return f.load().then(function () { return 'loaded'; }, function () { return 'error'; });
      })).then(function (status) {
        log.fonts = {};
        faces.forEach(function (f, i) { log.fonts[name(f) + ' ' + f.weight] = status[i]; });
        save();
        resolve();
      });
    });
  });
  var poll = setInterval(function () {
    if (cfg.deck && !document.querySelector('.reveal.ready')) { return; }
    clearInterval(poll);
    var finish = function () {
      log.ready = true;
      if (cfg.measure) { log.slides = measure(); }
      if (cfg.speaker) { save(); speaker(cfg.speaker); } else { log.done = true; save(); }
    };
    var start = function () { fontsLoaded.then(finish); };
    if (window.MathJax && window.MathJax.Hub) { window.MathJax.Hub.Queue(start); } else { start(); }
  }, 50);
})();
"""


def with_probe(page: str, base_url: str, config: Mapping[str, Any]) -> str:
    """A copy of ``page`` that resolves relative URLs against ``base_url`` and runs :data:`PROBE_JS` first.

    ``config``: ``deck`` (wait for reveal.js), ``measure`` (measure every subslide), ``speaker``
    (``[h, v]``: go there, press S, read the speaker view), ``fonts`` (a list of ``@font-face`` families: load
    every face of them and record ``{"family weight": "loaded" | "error"}`` as ``probe["fonts"]``).
    """
    head = re.search(r"<head[^>]*>", page)
    if head is None:
        raise ValueError("no <head> in the page")
    inject = (f'\n<base href="{html.escape(base_url)}">\n'
              f"<script>window.__PROBE_CONFIG__ = {json.dumps(dict(config))};{PROBE_JS}</script>\n")
    return page[:head.end()] + inject + page[head.end():]


_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}


@dataclass
class Dom:
    """What a page showed, read from the DOM that ``chromium --dump-dom`` printed (see :func:`read_dom`)."""

    title: str = ""
    reveal_classes: list[str] = field(default_factory=list)
    sections: list[int] = field(default_factory=list)  # per top-level <section>: its child <section>s
    math_scripts: int = 0  # <script type="math/tex...">: formulas MathJax found
    math_display: int = 0  # ... of which display formulas
    math_rendered: int = 0  # MathJax output frames
    math_errors: int = 0
    text: str = ""  # all text, speaker notes included, scripts and styles left out
    slide_text: str = ""  # the text on the slides: without speaker notes
    links: list[tuple[str, str]] = field(default_factory=list)
    cell_ids: list[str] = field(default_factory=list)  # notebook cells on the page (nbconvert's id="cell-id=...")
    probe: dict[str, Any] = field(default_factory=dict)

    @property
    def ready(self) -> bool:
        """reveal.js marks a deck it has started with the class ``ready`` on ``.reveal``."""
        return "ready" in self.reveal_classes


class _DomReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.dom = Dom()
        self.stack: list[tuple[str, set[str]]] = []
        self.text: list[str] = []
        self.slide_text: list[str] = []
        self.link: list[Any] | None = None

    def _inside(self, tag: str, cls: str | None = None) -> bool:
        return any(t == tag and (cls is None or cls in c) for t, c in self.stack)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        classes = set(a.get("class", "").split())
        if tag == "html" and "data-probe" in a:
            self.dom.probe = json.loads(a["data-probe"])
        if tag == "div" and "reveal" in classes and not self.dom.reveal_classes:
            self.dom.reveal_classes = sorted(classes)
        if tag == "section" and self._inside("div", "slides"):
            depth = sum(t == "section" for t, _ in self.stack)
            if depth == 0:
                self.dom.sections.append(0)
            elif depth == 1:
                self.dom.sections[-1] += 1
        if tag == "script" and a.get("type", "").startswith("math/tex"):
            self.dom.math_scripts += 1
            self.dom.math_display += "mode=display" in a["type"]
        if re.fullmatch(r"MathJax-Element-\d+-Frame", a.get("id", "")):
            self.dom.math_rendered += 1
        if classes & {"mjx-merror", "MathJax_Error", "merror"}:
            self.dom.math_errors += 1
        if tag == "a" and "href" in a:
            self.link = [a["href"], ""]
        if a.get("id", "").startswith("cell-id="):
            self.dom.cell_ids.append(a["id"][len("cell-id="):])
        if tag not in _VOID:
            self.stack.append((tag, classes))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self.link is not None:
            self.dom.links.append((self.link[0], " ".join(self.link[1].split())))
            self.link = None
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data: str) -> None:
        if self._inside("title"):
            self.dom.title += data
        if self._inside("script") or self._inside("style") or self._inside("title"):
            return
        self.text.append(data)
        if not self._inside("aside", "notes"):
            self.slide_text.append(data)
        if self.link is not None:
            self.link[1] += data


def read_dom(dom: str) -> Dom:
    """Read a dumped DOM: reveal.js state, slide structure, MathJax output, text, links, probe results."""
    reader = _DomReader()
    reader.feed(dom)
    reader.close()
    reader.dom.text = " ".join(reader.text)
    reader.dom.slide_text = " ".join(reader.slide_text)
    reader.dom.title = reader.dom.title.strip()
    return reader.dom


def font_face_urls(page: str) -> list[str]:
    """The ``url(...)`` sources of a page's inline ``@font-face`` rules, in order."""
    rules = re.findall(r"@font-face\s*\{[^}]*\}", page)
    return [url for rule in rules for url in re.findall(r"""url\(\s*["']?([^"')]+)["']?\s*\)""", rule)]


def page_requests(netlog: Mapping[str, Any]) -> list[str]:
    """URLs that pages opened from ``file://`` asked the network for, read from a Chromium net log.

    Chromium's own background requests (update checks and the like) are left out: they carry no
    ``file://`` network isolation key and no page initiator.
    """
    types = netlog["constants"]["logEventTypes"]
    start = types["URL_REQUEST_START_JOB"]
    urls = []
    for event in netlog.get("events", []):
        p = event.get("params", {})
        if event.get("type") == start and ("file://" in p.get("network_isolation_key", "") or p.get("initiator") == "null"):
            urls.append(p["url"])
    return sorted(set(urls))
