"""The figures in Chinese: helpers.plots.use_language("zh") translates what the figures draw from
data/zh/plots.json, renders CJK with the vendored font (no system font), and "en" gives back English figures byte
for byte. No notebook runs here (tools/zh_plot_texts.py does that)."""

from __future__ import annotations

import io
import json
import re
import warnings
from collections import Counter
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib import font_manager  # noqa: E402
from matplotlib.ft2font import FT2Font  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from helpers import (classification_head, count_model, load_config, param_table, pretraining_heads, select,  # noqa: E402
                     under)
from helpers.plots import (bert_diagram, component_bars, ffn_diagram, finetune_bars, gpt2_llama_blocks,  # noqa: E402
                           heads_diagram, kv_cache_curves, memory_bars, mla_flow, moe_layer_diagram, norm_positions,
                           parameter_treemap, translate, untranslated, use_language)
from helpers.plots import language  # noqa: E402
from helpers.finetune import Finetune  # noqa: E402

from .conftest import ROOT  # noqa: E402

DICTIONARY = json.loads((ROOT / "data" / "zh" / "plots.json").read_text(encoding="utf-8"))
CJK = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]")
NUMBER = re.compile(r"\d[\d,.]*\d|\d")


@pytest.fixture
def zh():
    """Chinese for one test, English again after it (whatever the test did)."""
    use_language("zh")
    untranslated(reset=True)
    try:
        yield
    finally:
        use_language("en")


def png(fig: plt.Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight")
    return buffer.getvalue()


def texts(fig: plt.Figure) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text)]


def bert_figure() -> plt.Figure:
    return bert_diagram(param_table(load_config("bert-base-uncased"))).figure


# --- translate ------------------------------------------------------------------------------------------------

def test_exact_entries():
    assert translate("parameters") == "参数量"
    assert translate("feed-forward") == "前馈网络"
    assert translate("share of all parameters (%)") == "占全部参数的比例（%）"


def test_patterns_keep_the_figures():
    assert translate("109,482,240 parameters") == "109,482,240 个参数"
    assert translate("BertModel: 335,141,888 parameters") == "BertModel：335,141,888 个参数"
    assert translate("one layer, 512 tokens: 7,449,083,904 forward FLOPs") == "一层，512 个 token：前向传播 7,449,083,904 FLOPs"
    assert translate("picks k = 2 of E = 8") == "从 E = 8 个专家中选 k = 2 个"


def test_a_group_named_t_is_translated_in_turn():
    assert translate("LLaMA 7B: all attention") == "LLaMA 7B：全部注意力"
    assert translate("BERT (bert-base-uncased): post-LN") == "BERT (bert-base-uncased)：后置 LN（post-LN）"


def test_multi_line_texts_go_line_by_line_or_as_a_whole():
    assert translate("feed-forward\n56,669,184 (51.76%)") == "前馈网络\n56,669,184 (51.76%)"
    box = "attention\nin each of\n128 heads:\nq·k over\n128 + 64,\nweights × v\nover 128\n\n0 parameters"
    assert translate(box).count("\n") == box.count("\n") and "0 个参数" in translate(box)


def test_unknown_text_is_unchanged():
    for text in ("", "no entry says this", "W_Q", "3,072 × 768", "bert-base-uncased"):
        assert translate(text) == text


def test_every_entry_keeps_the_figures_of_its_english():
    for en, zh in DICTIONARY["exact"].items():
        assert Counter(NUMBER.findall(en)) == Counter(NUMBER.findall(zh)), en
    for regex, replacement in DICTIONARY["patterns"]:
        groups = re.compile(regex).groupindex
        assert all(f"\\g<{g}>" in replacement for g in groups), regex  # every group is copied
        literal = re.sub(r"\\g<\w+>", "", replacement)
        assert Counter(NUMBER.findall(literal)) <= Counter(NUMBER.findall(regex)), regex


def test_english_words_are_prose_not_code():
    assert language.english_words("(x − mean) / std · γ + β") == ["mean", "std"]
    assert language.english_words("query.weight  (W_Q) LayerNorm BERT bf16 bert-base-uncased $\\mathdefault{10^{3}}$") == []
    assert language.english_words("feed-forward") == ["feed", "forward"]


# --- use_language -----------------------------------------------------------------------------------------------

def test_only_en_and_zh():
    with pytest.raises(ValueError, match="'en', 'zh'"):
        use_language("fr")
    assert language.current_language() == "en"


def test_zh_then_en_restores_rcparams_and_drawing():
    before = dict(matplotlib.rcParams)
    methods = {name: Text.__dict__[name] for name in language._WRAPPED}
    use_language("zh")
    use_language("zh")  # twice: still one wrapper
    try:
        assert matplotlib.rcParams["font.family"][-1] == "Noto Sans CJK SC"
        assert Text.draw._zh_original is methods["draw"]
    finally:
        use_language("en")
    assert dict(matplotlib.rcParams) == before
    assert {name: Text.__dict__[name] for name in language._WRAPPED} == methods
    assert language.current_language() == "en"


def test_english_figures_are_unchanged_by_a_round_trip():
    english = bert_figure()
    first, words = png(english), texts(english)
    use_language("zh")
    try:
        chinese = bert_figure()
        assert png(chinese) != first
        assert texts(chinese) == words  # the objects keep their English text
    finally:
        use_language("en")
    again = bert_figure()
    assert png(again) == first and texts(again) == words
    plt.close("all")


# --- the vendored font ------------------------------------------------------------------------------------------

def test_chinese_text_needs_the_vendored_font():
    fig, ax = plt.subplots()
    ax.set_title("参数量")
    with pytest.warns(UserWarning, match="missing from font"):
        fig.canvas.draw()  # English settings: DejaVu Sans only
    plt.close(fig)


def test_chinese_text_is_drawn_with_the_vendored_font(zh):
    fonts = {Path(f.fname).name: f.weight for f in font_manager.fontManager.ttflist if f.name == "Noto Sans CJK SC"}
    assert fonts == {"NotoSansSC-Regular.subset.otf": 400, "NotoSansSC-Bold.subset.otf": 700}
    fig, ax = plt.subplots()
    ax.set_title("参数量：前馈网络 109,482,240", fontweight="bold")
    ax.set_xlabel("隐藏层维度 H")
    ax.text(0.5, 0.5, "层归一化", family="monospace")
    found = font_manager.fontManager._find_fonts_by_props(ax.title.get_fontproperties())
    assert [Path(f).name for f in found] == ["DejaVuSans-Bold.ttf", "NotoSansSC-Bold.subset.otf"]  # Latin as in English
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig.canvas.draw()
    plt.close(fig)


def test_the_font_holds_every_character_of_the_dictionary():
    chars = set(CJK.findall(json.dumps(DICTIONARY, ensure_ascii=False)))
    for name in language.FONT_FILES:
        charmap = FT2Font(str(language.FONT_DIR / name)).get_charmap()
        missing = {c for c in chars if ord(c) not in charmap}
        assert not missing, f"{name} lacks {''.join(sorted(missing))}: run `make cjk-font`"


# --- the series' figures ----------------------------------------------------------------------------------------

def draw_series() -> None:
    """A representative set of the series' figures, on models other than the notebooks' where it can."""
    large, gpt2, llama = (load_config(n) for n in ("bert-large-uncased", "gpt2", "llama-13b"))
    params = param_table(large)
    bert_diagram(params)
    component_bars(count_model(large).components, "bert-large-uncased")
    ffn_diagram(select(under(params, "encoder.layer.0."), component="feed-forward"))
    norm_positions({"BERT (bert-large-uncased)": params, "GPT-2 (gpt2)": param_table(gpt2)})
    heads_diagram(params, pretraining_heads(large), classification_head(large, 3))
    parameter_treemap(params)
    gpt2_llama_blocks(param_table(gpt2), param_table(llama), ("GPT-2 small (gpt2)", "llama-13b"),
                      gqa=load_config("llama-2-70b"))
    memory_bars({"training": {"weights (fp16)": 2**31, "gradients (fp16)": 2**31, "activations (estimate)": 2**30},
                 "inference": {"weights (fp16)": 2**31, "KV cache (fp16)": 2**29}}, "LLaMA 7B, B = 1, S = 4,096")
    mixtral, deepseek = load_config("mixtral-8x7b-v0.1"), load_config("deepseek-v3")
    moe_layer_diagram(select(param_table(mixtral), layer=1), mixtral["k"], (0, 5), title="Mixtral 8x7B: one layer's mixture")
    mla_flow([p for p in select(param_table(deepseek), layer=3) if ".self_attn." in p.name], deepseek["A"])
    kv_cache_curves({"OLMo 2 7B: full, 32 KV heads": load_config("olmo-2-1124-7b"),
                     "DeepSeek-V3: latent (MLA)": deepseek}, [128, 1024, 8192],
                    "One sequence's decode cache against S, bf16 (helpers.memory.kv_cache_bytes)")
    run = Finetune(load_config("llama-7b"), "qlora", 16, "all-linear", 1, 512, "adamw", "full", "bf16")
    finetune_bars({"QLoRA (NF4 weights)": run}, "zoomed: QLoRA against one 48 GB GPU", limit=48 * 10**9,
                  limit_label="48 GB")
    for number in plt.get_fignums():
        png(plt.figure(number))
    plt.close("all")


def test_the_series_figures_leave_nothing_in_english(zh):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # a glyph missing from the font
        draw_series()
    assert untranslated() == []


def test_untranslated_lists_what_no_entry_covers(zh):
    fig, ax = plt.subplots()
    ax.set_title("A title no entry covers")
    ax.set_xlabel("parameters")
    ax.set_ylabel("bert-base-uncased")
    png(fig)
    plt.close(fig)
    assert untranslated(reset=True) == ["A title no entry covers"]
    assert untranslated() == []


# --- the coverage tool ------------------------------------------------------------------------------------------

def test_the_coverage_tool_runs_a_notebook_in_chinese(tmp_path, capsys):
    from tools import zh_plot_texts

    cells = ["import matplotlib.pyplot as plt",
             "fig, ax = plt.subplots()\nax.set_title('A title no entry covers')\nax.set_xlabel('parameters')\n"
             "print('printed output is dropped')\nplt.show()"]
    notebook = {"cells": [{"cell_type": "code", "source": s, "metadata": {}, "outputs": []} for s in cells],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "99_tiny.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    assert zh_plot_texts.main([str(path), "--all"]) == 1
    out = capsys.readouterr().out
    assert "  LEFT cells [1]: 'A title no entry covers'" in out
    assert "'parameters' -> '参数量'" in out and "1 problem(s)" in out
