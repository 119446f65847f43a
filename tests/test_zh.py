"""The Chinese edition (notebooks/zh) cannot drift from the English: one source of truth, checked here.

Every English notebook has its zh twin, made by ``make zh`` from the English code and the translations in
data/zh/<notebook>.md. A translation is keyed by the English cell's id and the hash of its English text, so an
English Markdown cell edited after its translation fails here, naming the cell, until the translation is revised
(``python tools/zh.py stamp``) and ``make zh`` run. The content checks: figures kept, the Chinese short forms
(1.09 亿) right, no English sentence left, at least 90% of each notebook's Markdown cells in Chinese, and one name
per idea (data/glossary.zh.json).
"""

from __future__ import annotations

import copy
import json
import subprocess

import pytest


from tools import zh  # noqa: E402  (tools/zh.py: make zh and its checks)

ENGLISH = zh.english_notebooks()
ZH = sorted(zh.ZH_DIR.glob("*.ipynb"))
GLOSSARY = json.loads(zh.GLOSSARY.read_text(encoding="utf-8"))


def entries(en_path):
    return zh.parse(zh.translation_path(en_path).read_text(encoding="utf-8"))


def test_every_english_notebook_has_its_zh_twin_and_nothing_else_is_there():
    assert ENGLISH and {p.name for p in ZH} == {p.name for p in ENGLISH} | set(zh.ZH_ONLY)
    assert {p.name for p in zh.TRANSLATIONS.glob("*.md")} == {f"{p.stem}.md" for p in ENGLISH}


@pytest.mark.parametrize("en_path", ENGLISH, ids=lambda p: p.stem)
def test_translations_answer_the_english_as_it_is(en_path):
    """Fails, naming the cell, when an English Markdown cell changed after its translation was made."""
    problems = zh.sync_problems(en_path.name, zh.load(en_path), entries(en_path))
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("en_path", ENGLISH, ids=lambda p: p.stem)
def test_zh_notebook_is_what_make_zh_makes(en_path):
    """The stored zh notebook holds the English code cell for cell, the translations, the cells' metadata."""
    diffs = zh.stale_build(zh.load(en_path), entries(en_path), zh.load(zh.ZH_DIR / en_path.name), en_path.name)
    assert diffs == [], f"notebooks/zh/{en_path.name}: {diffs[:5]}: run `make zh`"


@pytest.mark.parametrize("en_path", ENGLISH, ids=lambda p: p.stem)
def test_code_cells_are_the_english_ones(en_path):
    code = [(c["id"], zh.source(c)) for c in zh.load(en_path)["cells"] if c["cell_type"] == "code"]
    twin = [(c["id"], zh.source(c)) for c in zh.load(zh.ZH_DIR / en_path.name)["cells"]
            if c["cell_type"] == "code" and c["id"] != zh.LANGUAGE_CELL_ID]
    assert code == twin


@pytest.mark.parametrize("zh_path", ZH, ids=lambda p: p.stem)
def test_markdown_is_chinese(zh_path):
    """At least 90% of the Markdown cells are written in Chinese (the rest: formulas, code names)."""
    nb = zh.load(zh_path)
    assert zh.chinese_share(nb) >= zh.MIN_CHINESE_SHARE
    left = [(c["id"], r) for c in zh.markdown_cells(nb) for r in zh.english_runs(zh.source(c))]
    assert left == [], f"English prose left: {left[:5]}"


@pytest.mark.parametrize("en_path", ENGLISH, ids=lambda p: p.stem)
def test_translation_keeps_every_figure(en_path):
    """Each grouped figure of the English is in the translation, and each 亿/万 short form is the figure rounded."""
    problems = zh.content_problems(en_path)
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("zh_path", ZH, ids=lambda p: p.stem)
def test_one_name_per_idea(zh_path):
    """No zh notebook uses a rendering the glossary avoids (层标准化 for 层归一化, ...)."""
    text = "\n".join(zh.source(c) for c in zh.markdown_cells(zh.load(zh_path)))
    used = [(t["en"], a) for t in GLOSSARY["terms"] for a in t["avoid"] if a in text]
    assert used == []


MAX_COLONS = 15  # full-width colons per 1,000 Chinese characters of prose (the reviewed edition had about 25)


@pytest.mark.parametrize("zh_path", ZH, ids=lambda p: p.stem)
def test_house_style(zh_path):
    """Speaker notes labelled 演讲者备注 and folded; the write-ups are 博文 (原文 reads as the English original);
    笔记本, not "notebook", in the prose; few colons (，因为，即，—— instead)."""
    cells = zh.markdown_cells(zh.load(zh_path))
    notes = [c for c in cells if c["metadata"].get("slideshow", {}).get("slide_type") == "notes"]
    assert notes and [c["id"] for c in notes if not zh.source(c).startswith("**演讲者备注。** ")
                      or not c["metadata"].get("jupyter", {}).get("source_hidden")] == []
    prose = "\n".join(zh.strip_markup(zh.source(c)) for c in cells)
    assert [w for w in ("原文", "讲者备注") if w in prose.replace("演讲者备注", "")] == []
    assert "notebook" not in prose.lower().replace("jupyter notebook", "")
    colons = 1000 * prose.count("：") / len(zh.CJK.findall(prose))
    assert colons <= MAX_COLONS, f"{colons:.1f} colons per 1,000 characters"


def test_glossary_is_well_formed_and_used():
    terms = GLOSSARY["terms"]
    assert len(terms) >= 80 and all({"en", "zh", "symbol", "code", "avoid"} <= set(t) for t in terms)
    assert len({t["en"] for t in terms}) == len(terms), "one entry per English term"
    prose = "\n".join(zh.source(c) for p in ZH for c in zh.markdown_cells(zh.load(p)))
    core = ["参数量", "词嵌入", "多头注意力", "前馈网络", "层归一化", "池化层", "偏置", "词表大小", "隐藏层维度"]
    assert [w for w in core if w not in prose] == []
    assert all(t["zh"] not in t["avoid"] for t in terms)


# ---- the mechanism itself, on a copy: an edited English cell fails, a revised translation passes ----------------

def test_sync_fails_on_an_edited_english_cell_and_passes_after_the_translation_is_revised():
    en_path = ENGLISH[3]
    en = zh.load(en_path)
    found = entries(en_path)
    cell = zh.markdown_cells(en)[2]
    assert zh.sync_problems(en_path.name, en, found) == []

    edited = copy.deepcopy(en)
    target = next(c for c in edited["cells"] if c["id"] == cell["id"])
    target["source"] = zh.source(target) + "\n\nOne more sentence in English."
    problems = zh.sync_problems(en_path.name, edited, found)
    assert len(problems) == 1 and cell["id"] in problems[0] and "changed since its translation" in problems[0]
    assert "{+One more sentence in English.+}" in problems[0], "the message shows what changed in the English"
    with pytest.raises(ValueError, match=f"{en_path.name}: cell {cell['id']} changed"):
        zh.build(edited, found, en_path.name)

    revised = dict(found)
    revised[cell["id"]] = zh.Entry(zh.en_hash(zh.source(target)), found[cell["id"]].text + "\n\n再加一句中文。")
    assert zh.sync_problems(en_path.name, edited, revised) == []
    built = zh.build(edited, revised)
    assert next(zh.source(c) for c in built["cells"] if c["id"] == cell["id"]).endswith("再加一句中文。")


def test_sync_names_new_and_removed_cells():
    en_path = ENGLISH[0]
    en, found = zh.load(en_path), entries(en_path)
    added = copy.deepcopy(en)
    added["cells"].insert(1, {"cell_type": "markdown", "id": "new-cell", "metadata": {}, "source": "New text."})
    assert any("new-cell has no translation" in p for p in zh.sync_problems(en_path.name, added, found))
    removed = copy.deepcopy(en)
    gone = zh.markdown_cells(removed)[1]["id"]
    removed["cells"] = [c for c in removed["cells"] if c["id"] != gone]
    assert any(f"cell {gone}, which the English no longer has" in p for p in zh.sync_problems(en_path.name, removed, found))


def test_translation_file_round_trips():
    text = zh.translation_path(ENGLISH[1]).read_text(encoding="utf-8")
    parsed = zh.parse(text)
    assert zh.parse(zh.render(ENGLISH[1].name, parsed.items())) == parsed


def test_content_checks_catch_what_they_should():
    assert zh.short_form_errors("共 1.09 亿（109,482,240）个参数") == []
    assert zh.short_form_errors("共 1.1 亿（109,482,240）个参数") == []
    assert zh.short_form_errors("67.4 亿 (6,738,415,616)") == []
    assert len(zh.short_form_errors("共 1.10 亿（109,482,240）个参数")) == 1
    assert len(zh.short_form_errors("59.0 万（590,592）")) == 1
    assert zh.missing_figures("BERT-base holds 109,482,240 and 590,592.", "共 1.09 亿（109,482,240）") == ["590,592"]
    assert zh.english_runs("注意力头的数目是 A，见 *Attention Is All You Need*。") == []
    assert zh.english_runs("The pooler adds one dense layer here.") == ["The pooler adds one dense layer here"]
    assert zh.is_chinese("池化层：$H^2 + H$") and not zh.is_chinese("$H^2 + H$ `pooler.dense`")


# ---- the sync tooling on a repository of its own: the diff in the message, and stamp's --unchanged ---------------

def _repo(tmp_path, monkeypatch):
    """A git repository holding one English notebook (two Markdown cells) and its translation, committed."""
    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                       check=True, capture_output=True)
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "zh").mkdir()
    en_path = tmp_path / "notebooks" / "99_demo.ipynb"
    cells = [{"cell_type": "markdown", "id": "99-a", "metadata": {}, "source": "The pooler adds H² + H parameters."},
             {"cell_type": "markdown", "id": "99-b", "metadata": {}, "source": "Two tables of V × H."}]
    en = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    en_path.write_text(zh.dump(en), encoding="utf-8")
    monkeypatch.setattr(zh, "TRANSLATIONS", tmp_path / "zh")
    zh.translation_path(en_path).write_text(zh.render(en_path.name, [
        ("99-a", zh.Entry(zh.en_hash(cells[0]["source"]), "池化层有 H² + H 个参数。")),
        ("99-b", zh.Entry(zh.en_hash(cells[1]["source"]), "两张 V × H 的表。"))]), encoding="utf-8")
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "one notebook and its translation")
    return en_path, en, git


def test_a_stale_translation_shows_what_changed_in_the_english(tmp_path, monkeypatch):
    en_path, en, git = _repo(tmp_path, monkeypatch)
    en["cells"][0]["source"] = "The pooler adds one dense layer, H² + H parameters."
    en_path.write_text(zh.dump(en), encoding="utf-8")
    found = zh.parse(zh.translation_path(en_path).read_text(encoding="utf-8"))
    for committed in (False, True):  # the change in the working tree, then committed: the same English is found
        if committed:
            git("commit", "-q", "-am", "the English changes")
        (problem,) = zh.sync_problems(en_path.name, en, found, en_path)
        assert "cell 99-a changed since its translation was made; the English changed:" in problem
        assert "The pooler adds {+one dense layer,+} H² + H parameters." in problem
    assert zh.what_changed(None, "Now this.").endswith("the English now: 'Now this.'")  # no history: the start


def test_stamp_refuses_an_unchanged_translation_unless_told(tmp_path, monkeypatch):
    en_path, en, git = _repo(tmp_path, monkeypatch)
    en["cells"][0]["source"] = "The pooler adds one dense layer, H² + H parameters."
    en["cells"][1]["source"] = "Two tables of V × H (the word table and the head)."
    en_path.write_text(zh.dump(en), encoding="utf-8")
    git("commit", "-q", "-am", "the English changes")
    tpath = zh.translation_path(en_path)
    with pytest.raises(SystemExit, match=r"(?s)cell 99-a: the English changed:.*\{\+one dense layer,\+\}.*--unchanged"):
        zh.stamp(en_path, ["99-a"])
    assert zh.sync_problems(en_path.name, en, zh.parse(tpath.read_text(encoding="utf-8")), en_path)  # still stale

    tpath.write_text(tpath.read_text(encoding="utf-8").replace("池化层有", "池化层是一个全连接层，有"), encoding="utf-8")
    zh.stamp(en_path, ["99-a"])  # revised (not yet committed): stamped
    with pytest.raises(SystemExit, match="99-b"):
        zh.stamp(en_path, ["99-b"])
    zh.stamp(en_path, ["99-b"], unchanged=True)  # the translation holds for the new English: said explicitly
    found = zh.parse(tpath.read_text(encoding="utf-8"))
    assert zh.sync_problems(en_path.name, en, found, en_path) == []
    assert found["99-a"].text == "池化层是一个全连接层，有 H² + H 个参数。" and found["99-b"].text == "两张 V × H 的表。"


# ---- one language per notebook: the switch that draws the figures in Chinese prints the helpers' output in Chinese --

@pytest.fixture
def chinese():
    from helpers.plots import use_language

    use_language("zh")
    try:
        yield
    finally:
        use_language("en")


def test_one_switch_prints_tables_and_the_checker_in_chinese(chinese, capsys):
    from helpers import table
    from helpers.exercises import check, verdict

    assert table(("tensor", "parameters"), [("pooler.dense.weight", "589,824")], right=(1,)).splitlines() == [
        "张量                  参数量", "-------------------  -------", "pooler.dense.weight  589,824"]
    check("00.1", None)
    check("00.2", None)
    assert capsys.readouterr().out == "练习 00.1：未作答\n练习 00.2：未作答：先写下你的猜测，再运行这个单元格\n"
    assert verdict("00.1", "a").startswith("还不对。提示：拿每个选项对照幻灯片")
    assert verdict("00.1", "e") == "还不对：请从 'a'、'b'、'c'、'd' 中选一个"
    assert verdict("08.4", 10) == "完全正确：引擎算出 10 字节，你猜的是 10 字节"
    assert verdict("00.4", lambda **kw: None) == "未作答"
    assert verdict("00.4", lambda **kw: 1) == "还不对：bert-base-uncased 上的结果不对，偏低"


def test_english_output_is_as_before(capsys):
    from helpers import table
    from helpers.exercises import check, verdict

    assert table(("tensor", "parameters"), [("pooler.dense.weight", "589,824")], right=(1,)).splitlines() == [
        "tensor               parameters", "-------------------  ----------", "pooler.dense.weight     589,824"]
    check("00.1", None)
    assert capsys.readouterr().out == "Exercise 00.1: not attempted\n"
    assert verdict("00.1", "e") == "not yet: choose one of 'a', 'b', 'c', 'd'"


def test_every_hint_and_unit_of_the_checker_has_its_chinese():
    from helpers.exercises import BANK, _load
    from helpers.language import translate

    _load()
    left = [(e.id, text) for e in BANK.values() for text in (e.hint, e.unit.strip()) if text
            and text not in ("%", "×", "GiB") and translate(text) == text]
    assert left == [], "data/zh/plots.json lacks these (a changed hint in helpers/exercises/nbNN.py shows here)"


@pytest.mark.parametrize("zh_path", ZH, ids=lambda p: p.stem)
def test_printed_output_is_chinese(zh_path):
    """Every line the stored zh notebook printed reads Chinese: table headers, the checker's verdicts and the
    notebooks' own lines (re-run `make zh` after a change to what a notebook or a helper prints, or to data/zh/)."""
    left = zh.printed_prose(zh.load(zh_path))
    assert left == [], f"{len(left)} lines print English, e.g. {left[:3]} (python tools/zh.py printed {zh_path})"


def test_a_printed_line_is_translated_whole_or_column_by_column(monkeypatch):
    """An entry for the whole line wins; else each column (two or more spaces apart) is translated and keeps the
    display column it started at in English, so the rows of a table stay aligned."""
    from helpers import language

    d = language.printed_dictionary()
    exact = dict(d.exact, **{"attention weights L·4H²": "注意力权重 L·4H²", "feed-forward weights L·2HI": "前馈网络权重 L·2HI"})
    patterns = ((language.re.compile(r"file: ([\d,]+) bytes"), r"文件：\g<1> 字节"), *d.patterns)
    monkeypatch.setattr(language, "printed_dictionary", lambda: language._Dictionary(exact, patterns, d.keep))
    language.printed_line.cache_clear()  # it remembers what it translated with the real dictionary
    language.translation.cache_clear()
    rows = ["attention weights L·4H²       28,311,552", "feed-forward weights L·2HI    56,623,104"]
    zh_rows = [language.printed_line(r) for r in rows]
    assert zh_rows == ["注意力权重 L·4H²              28,311,552", "前馈网络权重 L·2HI            56,623,104"]
    assert {language.display_width(r) for r in zh_rows} == {len(r) for r in rows}  # the figures end where they did
    assert language.printed_line("file: 90,868,376 bytes") == "文件：90,868,376 字节"
    assert [language.printed_line(r) for r in zh_rows] == zh_rows  # Chinese passes through unchanged
    assert language.printed_line("nothing covers this line") == "nothing covers this line"  # stays, and the test
    # above (test_printed_output_is_chinese) names it
    language.printed_line.cache_clear()  # what the patched dictionary gave is not left for the tests after this one
    language.translation.cache_clear()


def test_a_round_figure_in_millions_or_billions_reads_in_wan_and_yi():
    """A paper's "60 million" or "2.8 billion" is printed as Chinese writes it, every digit kept."""
    from helpers.language import round_figure

    assert [round_figure(f, s) for f, s in [("60", 10**6), ("149", 10**6), ("2.8", 10**9), ("355", 10**9),
                                               ("1.25", 10**12), ("0.5", 10**3)]] == [
        "6000 万", "1.49 亿", "28 亿", "3550 亿", "1.25 万亿", "500"]


def test_the_switch_touches_stdout_only_in_a_notebook():
    """Outside IPython (the command line, these tests) use_language leaves sys.stdout alone."""
    import sys

    from helpers.plots import use_language

    before = sys.stdout
    use_language("zh")
    try:
        assert sys.stdout is before
    finally:
        use_language("en")


def test_the_printed_lines_entries_stay_out_of_the_figures():
    """A figure reads data/zh/plots.json alone, a printed line that too and then data/zh/printed/, whose entries win: 10's
    hardware table heads its GPUs' column "key" (键名), and the key tensor in every figure stays ``key``."""
    from helpers import language

    assert language.translate("key") == "key" == language.dictionary().exact["key"]
    assert language.printed_dictionary().exact["key"] == "键名"
    assert language.printed_line("key        TFLOP/s").startswith("键名")


def test_no_printed_entry_is_translated_two_ways():
    """The printed lines' files share one dictionary: an exact line or a pattern in two of them has one translation, so
    which notebook's file comes last never changes what another notebook prints."""
    import collections

    from helpers import language

    seen: dict[str, dict[str, str]] = collections.defaultdict(dict)
    for path in sorted(language.PRINTED.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for key, chinese in [*data["exact"].items(), *(("re:" + regex, text) for regex, text in data["patterns"])]:
            seen[key][path.name] = chinese
    assert {key: files for key, files in seen.items() if len(set(files.values())) > 1} == {}
