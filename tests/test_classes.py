"""Every class a family lists (``count --class``) against transformers' own class, built on the meta device.

For each family of the registry and each class it names (its default first): the same tensor names, shapes and
order as ``named_parameters()`` and the same total as ``parameters()`` (tied tensors once), on the family's tiny
config (with transformers' default labels, with 3 labels, and untied), on a shipped config and on random configs.
Then the label heads' reading (``num_labels``, ``id2label``, ``--num-labels``), the refusals, and the command line.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import ConfigError, count_model, load_config, param_table, parse_config
from helpers.config import MODELS_DIR
from helpers.count import describe
from helpers.families import FAMILIES
from helpers.flops import forward_flops

from .conftest import assert_refused, run_cli
from .strategies import STRATEGIES, TINY

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
transformers.logging.set_verbosity_error()

CASES = [(model_type, name) for model_type, family in FAMILIES.items() for name in family.class_names]
SHIPPED = {}  # one shipped config per family: the first by name
for _path in sorted(MODELS_DIR.glob("*.json")):
    SHIPPED.setdefault(json.loads(_path.read_text())["model_type"], _path.stem)
CHANGES = {"defaults": {}, "3 labels": {"num_labels": 3}, "untied": {"tie_word_embeddings": False}}


def theirs(raw: dict, name: str) -> tuple[list[tuple[str, tuple[int, ...]]], int]:
    """transformers' class ``name`` built from ``raw`` on the meta device: its named parameters and its total."""
    with torch.device("meta"):
        model = getattr(transformers, name)(transformers.AutoConfig.for_model(**raw))
    return [(n, tuple(p.shape)) for n, p in model.named_parameters()], sum(p.numel() for p in model.parameters())


def compare(raw: dict, name: str) -> int:
    """Our table and total for class ``name`` against transformers'; returns the total."""
    c = parse_config(raw, model_class=name)
    assert c.architecture == name
    table, figure = theirs(raw, name)
    assert [(p.name, p.shape) for p in param_table(c)] == table
    assert count_model(c).total == figure  # count_model also checks every component against its formula
    return figure


def test_every_family_lists_classes_transformers_has():
    assert len(CASES) >= 100
    for model_type, name in CASES:
        assert isinstance(getattr(transformers, name), type), name
        assert getattr(transformers, name).config_class.model_type == model_type, name


@pytest.mark.parametrize("change", list(CHANGES.values()), ids=list(CHANGES))
@pytest.mark.parametrize(("model_type", "name"), CASES, ids=[name for _, name in CASES])
def test_every_class_is_what_transformers_builds(model_type, name, change):
    raw = {**TINY[model_type], **change}
    if name == "DistilBertForQuestionAnswering" and change.get("num_labels", 2) != 2:
        with pytest.raises(ValueError, match="num_labels should be 2"):  # transformers refuses; so do we
            theirs(raw, name)
        with pytest.raises(ConfigError, match="^num_labels: DistilBertForQuestionAnswering requires 2 labels"):
            parse_config(raw, model_class=name)
        return
    compare(raw, name)


@pytest.mark.parametrize(("model_type", "name"), CASES, ids=[name for _, name in CASES])
def test_every_class_on_a_shipped_config(model_type, name):
    raw = json.loads((MODELS_DIR / f"{SHIPPED[model_type]}.json").read_text())
    compare({**raw, "num_labels": 2 if name == "DistilBertForQuestionAnswering" else 5}, name)


@given(st.sampled_from(CASES).flatmap(lambda case: st.tuples(st.just(case[1]), STRATEGIES[case[0]])),
       st.integers(1, 4), st.booleans())
@settings(max_examples=60, deadline=None)
def test_random_configs_and_classes(case, labels, tied):
    name, raw = case
    if name == "DistilBertForQuestionAnswering":
        labels = 2
    compare({**raw, "num_labels": labels, "tie_word_embeddings": tied}, name)


# --- what the heads hold, by hand ----------------------------------------------------------------------------

def test_bert_heads_by_hand():
    """BertModel + a head: what each class adds or drops, the tied decoder counted once, its bias kept."""
    base = count_model(load_config("bert-base-uncased")).total
    H, V = 768, 30522
    pooler = H * H + H
    mlm = V + (H * H + H) + 2 * H  # the decoder's own bias, the transform dense, its LayerNorm; the weight is tied
    figures = {name: count_model(load_config("bert-base-uncased", model_class=name)).total for name in
               ("BertForMaskedLM", "BertForPreTraining", "BertForSequenceClassification", "BertForTokenClassification",
                "BertForQuestionAnswering", "BertForMultipleChoice", "BertForNextSentencePrediction")}
    assert figures == {
        "BertForMaskedLM": base - pooler + mlm,  # add_pooling_layer=False
        "BertForPreTraining": base + mlm + 2 * H + 2,  # NSP on the pooled output
        "BertForSequenceClassification": base + 2 * H + 2,  # num_labels: 2 by default
        "BertForTokenClassification": base - pooler + 2 * H + 2,
        "BertForQuestionAnswering": base - pooler + 2 * H + 2,
        "BertForMultipleChoice": base + H + 1,
        "BertForNextSentencePrediction": base + 2 * H + 2,
    }
    assert figures["BertForPreTraining"] == 110_106_428  # shared/REFERENCE.md, measured in transformers
    untied = parse_config({**json.loads((MODELS_DIR / "bert-base-uncased.json").read_text()),
                           "tie_word_embeddings": False}, model_class="BertForMaskedLM")
    assert count_model(untied).total == figures["BertForMaskedLM"] + V * H + V  # a decoder weight and bias of its own


def test_xlm_roberta_lists_the_tied_table_under_the_head():
    """XLMRobertaForMaskedLM registers lm_head before roberta: the shared table is named by the head."""
    names = [p.name for p in param_table(load_config("xlm-roberta-base", model_class="XLMRobertaForMaskedLM"))]
    assert names[0] == "lm_head.bias" and "lm_head.decoder.weight" in names
    assert "roberta.embeddings.word_embeddings.weight" not in names and "lm_head.decoder.bias" not in names


def test_decoder_heads_by_hand():
    llama = count_model(load_config("llama-7b")).total
    V, H = 32000, 4096
    assert count_model(load_config("llama-7b", model_class="LlamaModel")).total == llama - V * H
    assert count_model(load_config("llama-7b", model_class="LlamaForSequenceClassification",
                                   num_labels=3)).total == llama - V * H + 3 * H  # score: no bias
    gpt2 = count_model(load_config("gpt2")).total
    assert count_model(load_config("gpt2", model_class="GPT2Model")).total == gpt2  # tied: the head adds nothing
    assert count_model(load_config("gpt2", model_class="GPT2DoubleHeadsModel")).total == gpt2 + 768 + 1


# --- reading the labels, and what is refused ------------------------------------------------------------------

def test_labels_read_as_transformers_reads_them():
    raw = {"model_type": "bert", "num_hidden_layers": 1}
    name = "BertForSequenceClassification"
    assert parse_config(raw, model_class=name)["C"] == 2
    assert parse_config({**raw, "num_labels": 5}, model_class=name)["C"] == 5
    id2label = {"0": "neg", "1": "neu", "2": "pos"}
    assert parse_config({**raw, "num_labels": 5, "id2label": id2label}, model_class=name)["C"] == 3  # id2label wins
    assert parse_config({**raw, "id2label": id2label}, model_class=name, num_labels=7)["C"] == 7  # so does --num-labels
    for labels in (2, 5):
        c = parse_config({**raw, "num_labels": labels}, model_class=name)
        assert count_model(c).total == theirs({**raw, "num_labels": labels}, name)[1]
    assert count_model(parse_config({**raw, "id2label": id2label}, model_class=name)).total == theirs(
        {**raw, "id2label": id2label}, name)[1]
    assert parse_config({**raw, "num_labels": "x"}).num_labels is None  # not read for a class without a label head


BAD = [
    ({}, "BertForPonies", None, "--class"),
    ({}, "LlamaForCausalLM", None, "--class"),  # another family's class
    ({}, "BertForMaskedLM", 3, "--num-labels"),  # no label head
    ({}, None, 3, "--num-labels"),  # BertModel: no label head either
    ({}, "BertForSequenceClassification", 0, "--num-labels"),
    ({"num_labels": 0}, "BertForSequenceClassification", None, "num_labels"),
    ({"num_labels": "3"}, "BertForSequenceClassification", None, "num_labels"),
    ({"id2label": {}}, "BertForSequenceClassification", None, "id2label"),
    ({"id2label": ["a", "b"]}, "BertForSequenceClassification", None, "id2label"),
    ({"id2label": {"a": "x"}}, "BertForSequenceClassification", None, "id2label"),
    ({"tie_word_embeddings": "yes"}, "BertForMaskedLM", None, "tie_word_embeddings"),
]


@pytest.mark.parametrize(("change", "name", "labels", "field"), BAD)
def test_bad_classes_and_labels_are_refused(change, name, labels, field):
    with pytest.raises(ConfigError) as error:
        parse_config({"model_type": "bert", **change}, model_class=name, num_labels=labels)
    assert error.value.field == field


def test_gpt2_double_heads_reads_its_summary_keys():
    raw = {**TINY["gpt2"], "summary_proj_to_labels": False}
    compare(raw, "GPT2DoubleHeadsModel")  # H × H instead of 1 × H
    compare({**TINY["gpt2"], "summary_use_proj": False}, "GPT2DoubleHeadsModel")  # no projection at all
    with pytest.raises(NotImplementedError):
        theirs({**TINY["gpt2"], "summary_type": "attn"}, "GPT2DoubleHeadsModel")
    with pytest.raises(ConfigError, match="^summary_type: "):
        parse_config({**TINY["gpt2"], "summary_type": "attn"}, model_class="GPT2DoubleHeadsModel")


def test_flops_refuse_what_they_do_not_model():
    """flops, memory and budget take no --class: the option is not theirs; the library refuses it for FLOPs."""
    with pytest.raises(ConfigError, match="^--class: FLOPs are modelled for GPT2LMHeadModel only"):
        forward_flops(load_config("gpt2", model_class="GPT2Model"), 1, 8)
    for command in (("flops", "gpt2", "--batch", "1", "--seq-len", "8"), ("memory", "gpt2"),
                    ("budget", "gpt2", "--tokens", "1e9", "--gpu", "H100-SXM", "--mfu", "0.4")):
        assert_refused(run_cli(*command, "--class", "GPT2Model"), "COMMAND")


# --- the command line ---------------------------------------------------------------------------------------

def test_count_names_the_class_it_counted():
    result = run_cli("count", "bert-base-uncased", "--class", "BertForSequenceClassification", "--num-labels", "3")
    assert result.returncode == 0, result.stderr
    c = load_config("bert-base-uncased", model_class="BertForSequenceClassification", num_labels=3)
    lines = result.stdout.splitlines()
    assert lines[0] == describe(c)
    assert lines[0].startswith("bert-base-uncased (BertForSequenceClassification, num_labels C=3: V=30522 H=768")
    figure = theirs(json.loads((MODELS_DIR / "bert-base-uncased.json").read_text()) | {"num_labels": 3},
                    "BertForSequenceClassification")[1]
    assert any(line.startswith("total") and f"{figure:,}" in line for line in lines)
    assert any(line.startswith("classifier") and "C·H + C" in line and "2,307" in line for line in lines)


def test_count_json_carries_the_class():
    doc = json.loads(run_cli("count", "gpt2", "--class", "GPT2ForSequenceClassification", "--json").stdout)
    assert list(doc) == ["model", "class", "num_labels", "names", "total", "active", "components", "parameters"]
    assert (doc["class"], doc["num_labels"], doc["names"]) == ("GPT2ForSequenceClassification", 2, "transformers")
    assert doc["parameters"][-1] == {"name": "score.weight", "shape": [2, 768], "count": 1536, "component": "classifier"}
    assert doc["total"] == theirs(json.loads((MODELS_DIR / "gpt2.json").read_text()), "GPT2ForSequenceClassification")[1]
    default = json.loads(run_cli("count", "gpt2", "--json").stdout)
    assert (default["class"], default["num_labels"]) == ("GPT2LMHeadModel", None)


@pytest.mark.parametrize(("args", "field"), [
    (("--class", "BertForPonies"), "--class"),
    (("--class", "BertForMaskedLM", "--num-labels", "2"), "--num-labels"),
    (("--class", "BertForSequenceClassification", "--num-labels", "0"), "--num-labels"),
    (("--class", "BertForSequenceClassification", "--num-labels", "-1"), "--num-labels"),
    (("--class", "BertForSequenceClassification", "--num-labels", "two"), "--num-labels"),
    (("--num-labels", "3"), "--num-labels"),
])
def test_bad_class_options_are_one_line_and_exit_2(args, field):
    assert_refused(run_cli("count", "bert-base-uncased", *args), field)


def test_an_unknown_class_lists_the_known_ones():
    result = run_cli("count", "llama-7b", "--class", "LlamaForMaskedLM")
    assert_refused(result, "--class")
    assert all(name in result.stderr for name in FAMILIES["llama"].class_names)
