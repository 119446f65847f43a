"""``count --names checkpoint``: a mixture's experts as the checkpoints on disk name them, one tensor per expert.

transformers 5 fuses them when it loads (``mlp.experts.gate_up_proj`` E × 2I × H); the proof that our on-disk names
are the files' is transformers itself: a tiny checkpoint written under our names loads with no missing, unexpected
or mismatched key, each expert's values where the fused tensor keeps them. Both namings hold the same total.
"""

from __future__ import annotations

import json

import pytest

from helpers import ConfigError, count_model, load_config, param_table, parse_config
from helpers.count import tensor_table
from helpers.families import FAMILIES
from helpers.params import checkpoint_layout, component_counts

from .conftest import assert_refused, run_cli
from .strategies import TINY

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
safetensors_torch = pytest.importorskip("safetensors.torch")
transformers.logging.set_verbosity_error()

NAMED = [t for t, f in FAMILIES.items() if f.checkpoint_names is not None]
# (family, the MoE block's name on disk, the experts' gate, up and down projections on disk)
ON_DISK = {"mixtral": ("block_sparse_moe", "w1", "w3", "w2"), "qwen3_moe": ("mlp", "gate_proj", "up_proj", "down_proj"),
           "deepseek_v3": ("mlp", "gate_proj", "up_proj", "down_proj"),
           "glm4_moe": ("mlp", "gate_proj", "up_proj", "down_proj"),
           "deepseek_v2": ("mlp", "gate_proj", "up_proj", "down_proj")}


def test_the_mixtures_declare_their_checkpoint_names():
    assert {"mixtral", "qwen3_moe"} <= set(NAMED)
    assert set(ON_DISK) <= set(NAMED)


@pytest.mark.parametrize("model_type", NAMED)
@pytest.mark.parametrize("name", [None, "Model", "ForSequenceClassification"])
def test_both_namings_hold_the_same_parameters(model_type, name):
    family = FAMILIES[model_type]
    model_class = None if name is None else next((n for n in family.class_names if n.endswith(name)), "")
    if model_class == "":
        pytest.skip(f"transformers has no {name} class for {model_type}")  # GLM-4.5: the causal LM and its base only
    c = parse_config(TINY[model_type], model_class=model_class)
    fused, on_disk = param_table(c), checkpoint_layout(c).expand()
    assert len(on_disk) > len(fused)
    assert sum(p.count for p in on_disk) == sum(p.count for p in fused) == count_model(c).total
    assert component_counts(on_disk) == component_counts(fused)


@pytest.mark.parametrize("model_type", sorted(ON_DISK))
def test_transformers_loads_a_checkpoint_written_under_our_names(model_type, tmp_path):
    raw = TINY[model_type]
    c = parse_config(raw)
    on_disk = checkpoint_layout(c).expand()
    generator = torch.Generator().manual_seed(0)
    state = {p.name: torch.randn(p.shape, generator=generator) for p in on_disk}
    config = transformers.AutoConfig.for_model(**raw)
    with torch.device("meta"):  # saved buffers (DeepSeek-V3's e_score_correction_bias): on disk, no parameter
        built = getattr(transformers, c.architecture)(config)
    buffers = {n: t.shape for n, t in built.state_dict().items() if n not in dict(built.named_parameters())}
    state.update({n: torch.zeros(shape) for n, shape in buffers.items()})
    assert model_type not in ("deepseek_v3", "glm4_moe") or buffers
    config.save_pretrained(tmp_path)
    safetensors_torch.save_file(state, str(tmp_path / "model.safetensors"))
    model, info = getattr(transformers, c.architecture).from_pretrained(tmp_path, output_loading_info=True)
    assert not any(info.values()), info  # no missing, unexpected, mismatched key, no error
    loaded = dict(model.named_parameters())
    block, gate, up, down = ON_DISK[model_type]
    layers = sorted({int(n.split(".")[2]) for n in loaded if n.endswith("experts.gate_up_proj")})
    assert layers
    for i in layers:
        fused, fused_down = loaded[f"model.layers.{i}.mlp.experts.gate_up_proj"], loaded[f"model.layers.{i}.mlp.experts.down_proj"]
        rows = fused.shape[1] // 2
        assert torch.equal(loaded[f"model.layers.{i}.mlp.gate.weight"], state[f"model.layers.{i}.{block}.gate.weight"])
        for e in range(c["E"]):
            stem = f"model.layers.{i}.{block}.experts.{e}."
            assert torch.equal(fused[e, :rows], state[stem + f"{gate}.weight"])  # the gate rows first
            assert torch.equal(fused[e, rows:], state[stem + f"{up}.weight"])
            assert torch.equal(fused_down[e], state[stem + f"{down}.weight"])


@pytest.mark.parametrize(("name", "last"), [
    ("mixtral-8x7b-v0.1", ("model.layers.31.block_sparse_moe.experts.7.w2.weight", (4096, 14336))),
    ("qwen3-30b-a3b", ("model.layers.47.mlp.experts.127.down_proj.weight", (2048, 768))),
])
def test_shipped_mixtures_on_disk(name, last):
    c = load_config(name)
    on_disk = checkpoint_layout(c).expand()
    experts = [p for p in on_disk if ".experts." in p.name]
    assert (experts[-1].name, experts[-1].shape) == last
    assert len(experts) == 3 * c["E"] * (c.sizes.get("L_e", c["L"]))
    assert sum(p.count for p in on_disk) == count_model(c).total


def test_a_family_without_checkpoint_names_is_refused():
    with pytest.raises(ConfigError) as error:
        checkpoint_layout(load_config("gpt2"))
    assert error.value.field == "--names"
    assert_refused(run_cli("count", "gpt2", "--tensors", "--names", "checkpoint"), "--names")
    assert_refused(run_cli("count", "mixtral-8x7b-v0.1", "--names", "disk"), "--names")


def test_the_command_line_says_which_names_it_prints():
    fused = run_cli("count", "mixtral-8x7b-v0.1", "--tensors").stdout
    on_disk = run_cli("count", "mixtral-8x7b-v0.1", "--tensors", "--names", "checkpoint").stdout
    assert "tensors as transformers names them" in fused and "model.layers.0.mlp.experts.gate_up_proj" in fused
    assert "tensors as the checkpoints on disk name them" in on_disk
    assert "model.layers.0.block_sparse_moe.experts.0.w1.weight" in on_disk and "gate_up_proj" not in on_disk
    breakdown = fused.split("\n\ntensors as")[0]
    assert on_disk.startswith(breakdown)  # the same counts above the tensors
    doc = json.loads(run_cli("count", "qwen3-30b-a3b", "--json", "--names", "checkpoint").stdout)
    assert doc["names"] == "checkpoint"
    assert sum(p["count"] for p in doc["parameters"]) == doc["total"] == count_model(load_config("qwen3-30b-a3b")).total
    assert any(p["name"] == "model.layers.0.mlp.experts.0.gate_proj.weight" and p["shape"] == [768, 2048]
               for p in doc["parameters"])


def test_a_dense_family_lists_its_tensors_as_before():
    c = load_config("gpt2")
    text = run_cli("count", "gpt2", "--tensors").stdout
    assert text.endswith(tensor_table(param_table(c)) + "\n")  # no naming line for a family named alike
    assert "tensors as" not in text
