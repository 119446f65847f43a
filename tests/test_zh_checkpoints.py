"""The two notebooks written in Chinese only: the 勘误表 (notebooks/zh/errata.ipynb) and the Chinese checkpoints
(notebooks/zh/chinese_checkpoints.ipynb), and the helpers behind them (helpers/lessons/errata.py, helpers/lessons/checkpoint_files.py).

- counts: bert-base-chinese and chinese-roberta-wwm-ext as transformers builds them on the meta device (``BertModel``
  and ``BertForPreTraining``: names, shapes, totals) equal the engine's, and the tensors the files are read to hold;
- the safetensors header arithmetic: :func:`safetensors_header` is byte for byte what ``safetensors.torch.save``
  writes (tiny configs, several dtypes, with and without metadata), and the file size follows;
- the published sizes (data/published.json ``checkpoint_files``): exactly one reading reproduces bert-base-chinese's
  model.safetensors to the byte; ``torch.save``'s legacy pickle of a transformers 2.x ``BertForPreTraining`` state dict
  reproduces hfl/chinese-roberta-wwm-ext's pytorch_model.bin to the byte (NSP head included); each rounded size
  matches at its own rounding; the shipped config is the Hub's 689-byte config.json;
- the errata rows: each exact figure equals the engine's tensor table and transformers' class, each quote is one the
  data holds, each cited cell exists; :func:`zh_count` agrees with tools/zh.py's check of the short forms;
- the two notebooks: Chinese prose with correct short forms, no English sentences, decks without asserts.
"""

from __future__ import annotations

import io
import itertools
import json
import re
import struct

import pytest

from helpers import count_model, load_config, param_table, parse_config
from helpers.lessons.checkpoint import StoredTensor
from helpers.lessons.checkpoint_files import (ALIGNMENT, MLM, NSP, pretraining_file_tensors, safetensors_file_bytes,
                                      safetensors_header, tensor_bytes)
from helpers.config import MODELS_DIR, published, raw_config
from helpers.lessons.errata import UNITS, errata, errata_table, tensor_sum, zh_count

from .conftest import ROOT

from tools import zh  # noqa: E402  the zh edition's checker is a tool, not part of helpers

torch = pytest.importorskip("torch")

CHINESE = ("bert-base-chinese", "chinese-roberta-wwm-ext")
NOTEBOOKS = [ROOT / "notebooks" / "zh" / name for name in zh.ZH_ONLY]
FILES = published()["checkpoint_files"]


def file_row(model: str, file: str, exact: bool = True) -> dict:
    return next(r for r in FILES["rows"] if r["model"] == model and r["file"] == file and r["exact"] is exact)


# ---- counts against transformers on the meta device

@pytest.mark.parametrize("name", CHINESE)
@pytest.mark.parametrize("cls", ["BertModel", "BertForPreTraining"])
def test_counts_against_transformers_on_meta(name, cls):
    transformers = pytest.importorskip("transformers")
    config = transformers.BertConfig.from_dict(raw_config(name))
    with torch.device("meta"):
        model = getattr(transformers, cls)(config)
    theirs = [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    engine = load_config(name, model_class=cls)
    assert [(p.name, p.shape) for p in param_table(engine)] == theirs
    assert count_model(engine).total == sum(p.numel() for p in model.parameters())
    if cls == "BertForPreTraining":   # the file's tensors, read as weight/bias without position_ids
        assert {(t.name, t.shape) for t in pretraining_file_tensors(load_config(name))} == set(theirs)
        assert count_model(engine).total == 102_882_442


def test_the_two_chinese_configs_differ_from_bert_base_only_in_v():
    uncased, chinese, roberta = (load_config(n) for n in ("bert-base-uncased", *CHINESE))
    assert chinese.sizes == roberta.sizes and roberta.model_type == "bert"
    assert {k for k in chinese.sizes if chinese[k] != uncased[k]} == {"V"}
    assert count_model(uncased).total - count_model(chinese).total == (30522 - 21128) * 768
    assert count_model(chinese).total == next(w for w in published()["writeups"] if w["id"] == "002")["value"] == 102_267_648


def test_shipped_config_is_the_hubs_file():
    """data/models/chinese-roberta-wwm-ext.json is the Hub's config.json as is: 689 bytes at revision 5c58d0b8."""
    row = file_row("hfl/chinese-roberta-wwm-ext", "pytorch_model.bin")
    path = MODELS_DIR / "chinese-roberta-wwm-ext.json"
    assert path.stat().st_size == row["config_json_bytes"] == 689
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert raw["model_type"] == "bert" and raw["architectures"] == ["BertForMaskedLM"] and raw["vocab_size"] == 21128


# ---- the safetensors header arithmetic

TINY = {"model_type": "bert", "vocab_size": 99, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
        "intermediate_size": 16, "max_position_embeddings": 12, "type_vocab_size": 2}
DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "I64": torch.int64}


def saved(tensors: list[StoredTensor], metadata: dict | None) -> bytes:
    from safetensors.torch import save

    return save({t.name: torch.zeros(t.shape, dtype=DTYPES[t.dtype]) for t in tensors}, metadata=metadata)


@pytest.mark.parametrize("metadata", [None, {"format": "pt"}, {"format": "pt", "note": "中文"}])
@pytest.mark.parametrize("reading", list(itertools.product([(MLM, NSP), (MLM,), ()], [("weight", "bias"), ("gamma", "beta")],
                                                           [False, True], ["F32", "F16", "BF16"])))
def test_header_is_what_safetensors_writes(reading, metadata):
    pytest.importorskip("safetensors")
    heads, norms, position_ids, dtype = reading
    tensors = pretraining_file_tensors(parse_config(TINY), heads, norms, position_ids, dtype)
    raw = saved(tensors, metadata)
    (length,) = struct.unpack("<Q", raw[:8])
    ours = safetensors_header(tensors, metadata)                          # today's writer pads
    if metadata and len(metadata) > 1:   # the writer orders __metadata__'s keys by a hash map: same bytes, any order
        assert len(ours) == length and json.loads(ours) == json.loads(raw[8:8 + length])
    else:
        assert raw[8:8 + length] == ours
    assert len(raw) == safetensors_file_bytes(tensors, metadata) == 8 + length + tensor_bytes(tensors)
    assert length % ALIGNMENT == 0
    unpadded = safetensors_header(tensors, metadata, pad=False)
    assert unpadded == ours.rstrip(b" ") and len(unpadded) > length - ALIGNMENT


def test_header_rejects_two_tensors_of_one_name():
    with pytest.raises(ValueError, match="share a name"):
        safetensors_header([StoredTensor("a", (1,), "F32"), StoredTensor("a", (2,), "F32")])


def test_file_tensors_need_the_bertmodel_config():
    with pytest.raises(ValueError, match="BertModel config"):
        pretraining_file_tensors(load_config("bert-base-chinese", model_class="BertForPreTraining"))


# ---- the published sizes

def test_one_reading_reproduces_the_safetensors_file():
    target = file_row("google-bert/bert-base-chinese", "model.safetensors")["value"]
    chinese = load_config("bert-base-chinese")
    hits = []
    for heads, norms, position_ids, metadata, pad in itertools.product(
            [(MLM, NSP), (MLM,), ()], [("weight", "bias"), ("gamma", "beta")], [False, True],
            [None, {"format": "pt"}], [False, True]):
        tensors = pretraining_file_tensors(chinese, heads, norms, position_ids)
        if safetensors_file_bytes(tensors, metadata, pad) == target:
            hits.append((heads, norms, position_ids, metadata, pad))
    assert target == 411_553_788
    assert hits == [((MLM, NSP), ("gamma", "beta"), False, {"format": "pt"}, False)]


def test_bin_files_hold_the_heads():
    """Published .bin sizes less BertForPreTraining's data leave a pickle's tens of kilobytes; less BertModel's, MBs."""
    for model, name in (("google-bert/bert-base-chinese", "bert-base-chinese"),
                        ("hfl/chinese-roberta-wwm-ext", "chinese-roberta-wwm-ext")):
        size = file_row(model, "pytorch_model.bin")["value"]
        config = load_config(name)
        left = size - tensor_bytes(pretraining_file_tensors(config))
        assert 40_000 < left < 50_000
        assert size - tensor_bytes(pretraining_file_tensors(config, heads=())) > 2_500_000


class _Count(io.RawIOBase):
    """A sink that counts the bytes torch.save writes to it."""

    def __init__(self) -> None:
        self.n = 0

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        k = memoryview(b).nbytes
        self.n += k
        return k


def _transformers2_pretraining(config, nsp: bool = True):
    """BertForPreTraining's module tree as transformers 2.x built it (dropout modules, GELU as a function, the MLM
    decoder tied to the word table and its bias a separate parameter), storages allocated but never written."""
    nn = torch.nn
    H, V, I, L, P, T = (config[s] for s in ("H", "V", "I", "L", "P", "T"))

    def empty(module):
        return module.to_empty(device="cpu")

    def linear(i, o, bias=True):
        return empty(nn.Linear(i, o, bias=bias, device="meta"))

    def norm():
        return empty(nn.LayerNorm(H, device="meta"))

    def node(**children):
        m = nn.Module()
        for k, v in children.items():
            setattr(m, k, v)
        return m

    emb = node(word_embeddings=empty(nn.Embedding(V, H, device="meta")),
               position_embeddings=empty(nn.Embedding(P, H, device="meta")),
               token_type_embeddings=empty(nn.Embedding(T, H, device="meta")), LayerNorm=norm(), dropout=nn.Dropout())
    layers = nn.ModuleList(
        node(attention=node(self=node(query=linear(H, H), key=linear(H, H), value=linear(H, H), dropout=nn.Dropout()),
                            output=node(dense=linear(H, H), LayerNorm=norm(), dropout=nn.Dropout())),
             intermediate=node(dense=linear(H, I)),
             output=node(dense=linear(I, H), LayerNorm=norm(), dropout=nn.Dropout()))
        for _ in range(L))
    bert = node(embeddings=emb, encoder=node(layer=layers), pooler=node(dense=linear(H, H), activation=nn.Tanh()))
    predictions = nn.Module()
    predictions.bias = nn.Parameter(torch.empty(V))
    predictions.transform = node(dense=linear(H, H), LayerNorm=norm())
    predictions.decoder = linear(H, V, bias=False)
    predictions.decoder.weight = emb.word_embeddings.weight
    cls = node(predictions=predictions, **({"seq_relationship": linear(H, 2)} if nsp else {}))
    return node(bert=bert, cls=cls)


def _legacy_pickle_bytes(state: dict) -> int:
    """``torch.save`` in the legacy (pre-1.6) format, its storage keys counted as 14 digits.

    That format names each storage by its memory address (``str(storage._cdata)``): 14 digits on the machine that
    wrote the file, possibly more or fewer here. Each key is pickled once per tensor and once in the list of keys.
    """
    sink = _Count()
    torch.save(state, sink, _use_new_zipfile_serialization=False)
    keys = [str(t.untyped_storage()._cdata) for t in state.values()]
    return sink.n - sum(len(k) - 14 for k in keys) - sum(len(k) - 14 for k in set(keys))


def test_legacy_pickle_reproduces_the_roberta_wwm_bin():
    """hfl/chinese-roberta-wwm-ext's pytorch_model.bin, rebuilt without its weights: 411,578,458 bytes exactly,
    with the NSP head (the README: NSP loss dropped, yet the tensors are in the file) and no position_ids."""
    config = load_config("chinese-roberta-wwm-ext")
    target = file_row("hfl/chinese-roberta-wwm-ext", "pytorch_model.bin")["value"]
    state = _transformers2_pretraining(config).state_dict()
    assert len(state) == 207 and "cls.predictions.decoder.weight" in state   # the tied alias is a key of the pickle
    assert _legacy_pickle_bytes(state) == target == 411_578_458
    assert _legacy_pickle_bytes(_transformers2_pretraining(config, nsp=False).state_dict()) != target


def test_rounded_sizes_match_at_their_rounding():
    exact = {(r["model"], r["file"]): r["value"] for r in FILES["rows"] if r["exact"]}
    rounded = {r["stated"]: r for r in FILES["rows"] if not r["exact"]}
    assert set(rounded) == {"412M", "393MB", "约400M"}
    assert f"{exact[('google-bert/bert-base-chinese', 'model.safetensors')] / 10**6:.0f}M" == "412M"
    assert f"{exact[('hfl/chinese-roberta-wwm-ext', 'pytorch_model.bin')] / 2**20:.0f}MB" == "393MB"
    for n in (*exact.values(), 4 * count_model(load_config("bert-base-chinese")).total):
        assert round(n / 10**8) * 100 == 400  # “约400M” fits every reading: it tells none apart
    for r in FILES["rows"]:
        assert r["source"] and (r["exact"] or r["unit"])
        assert not r["exact"] or r["stated"] == f"{r['value']:,} bytes"


# ---- the errata

def test_every_exact_figure_three_ways():
    from helpers.fallback import count_by_transformers

    built = {}
    for e in errata():
        key = (e.config, e.model_class)
        built.setdefault(key, count_by_transformers(raw_config(e.config), model_class=e.model_class))
        engine = tensor_sum(param_table(load_config(e.config, model_class=e.model_class)), e.tensors) - e.minus
        assert e.exact == engine == tensor_sum(built[key].tensors, e.tensors) - e.minus, e.id


def test_errata_quote_the_writeups_and_cite_real_cells():
    data = published()
    quotes = {w["id"]: {q["zh"] for q in w["quotes"]} for w in data["writeups"]}
    rows = data["errata"]["rows"]
    assert len({r["id"] for r in rows}) == len(rows)
    for r in rows:
        assert r["quote"] in quotes[r["writeup"]] or r.get("en"), r["id"]   # a new quote carries our gloss
        nb = json.loads((ROOT / "notebooks" / f"{r['notebook']}.ipynb").read_text(encoding="utf-8"))
        assert r["cell"] in {c["id"] for c in nb["cells"]}, r["id"]
        assert r["notebook"] in data["errata"]["notebooks"]
    assert {s["writeup"] for s in data["errata"]["summary"]} == set(quotes)
    table = errata_table(errata(data))
    assert table.count("\n") == len(rows) + 1 and "（同上）" in table


@pytest.mark.parametrize("n, text", [(109_482_240, "1.09 亿（109,482,240）"), (6_738_415_616, "67.4 亿（6,738,415,616）"),
                                     (590_592, "59.1 万（590,592）"), (174_604_259_328, "1746 亿（174,604,259,328）"),
                                     (2 * 10**12, "2.00 万亿（2,000,000,000,000）"), (1_536, "1,536"),
                                     (99_995, "10.0 万（99,995）"), (-673_536, "−67.4 万（−673,536）")])
def test_zh_count(n, text):
    assert zh_count(n) == text


def test_zh_count_passes_the_zh_check():
    for n in [10**4, 99_949, 102_267_648, 999_500_000, 12_345_678_901, 10**13 - 1, *range(10_000, 10**9, 7_777_777)]:
        text = zh_count(n)
        assert zh.short_form_errors(text) == [], text
        assert any(unit in text for unit, _ in UNITS)


# ---- the two notebooks

@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_prose_is_chinese(path):
    nb = zh.load(path)
    assert zh.chinese_share(nb) == 1.0
    for cell in zh.markdown_cells(nb):
        text = zh.source(cell)
        assert zh.english_runs(text) == [], (cell["id"], zh.english_runs(text))
        assert zh.short_form_errors(text) == [], cell["id"]
        prose = re.sub(r"“[^”]*”|《[^》]*》", " ", zh.strip_markup(text))
        assert not re.search(r"[\u3400-\u9fff][A-Za-z0-9]|[A-Za-z0-9][\u3400-\u9fff]", prose), cell["id"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_deck_rules(path):
    nb = zh.load(path)
    cells = nb["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert "use_language" in zh.source(code[0]) and "from helpers" in zh.source(code[0])
    for c in code:
        shown = c["metadata"].get("slideshow", {}).get("slide_type") != "skip" and \
            "remove-input" not in c["metadata"].get("tags", [])
        if shown:
            assert "assert " not in zh.source(c) and len(zh.source(c).splitlines()) <= 12, c["id"]
    notes = [c for c in cells if c["metadata"].get("slideshow", {}).get("slide_type") == "notes"]
    assert all(zh.source(c).startswith("**演讲者备注。**") and c["metadata"]["jupyter"]["source_hidden"] for c in notes)
    exercises = [i for i, c in enumerate(cells) if re.match(r"\*\*练习 \d+（", zh.source(c))]
    solutions = [i for i, c in enumerate(cells) if "solution" in c["metadata"].get("tags", [])]
    assert len(exercises) == len(solutions) == 3
    assert all(q < a for q, a in zip(exercises, solutions))
    assert all(zh.source(cells[a]).startswith(f"**参考答案 {k}。**") for k, a in enumerate(solutions, 1))
