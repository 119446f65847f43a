"""Model types no family teaches: transformers builds its own class on meta and ``count`` / ``memory`` answer exactly.

Each case is a tiny config made by transformers' own config class; the fallback's table and total are compared with
the class transformers builds for it (named here, not looked up by the code under test), and its grouping is checked
tensor by tensor where the group says something (a Mamba mixer, a vision tower, a tied head).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import pytest

from helpers import fallback
from helpers.config import ConfigError
from helpers.families import FAMILIES
from helpers.params import ATTENTION, EMBEDDINGS, FEED_FORWARD, LAYER_NORM

from .conftest import ROOT, assert_refused, run_cli

pytest.importorskip("transformers")

TINY = dict(vocab_size=96, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48)
GQA = dict(TINY, num_key_value_heads=2)

# model_type -> (config class kwargs, the class transformers should build, {name fragment: group} spot checks)
CASES: dict[str, tuple[dict, str, dict[str, str]]] = {
    "falcon": (dict(vocab_size=96, hidden_size=32, num_hidden_layers=2, num_attention_heads=4), "FalconForCausalLM",
               {"self_attention.query_key_value": ATTENTION, "mlp.dense_h_to_4h": FEED_FORWARD,
                "transformer.ln_f": LAYER_NORM}),
    "phi": (dict(TINY), "PhiForCausalLM", {"self_attn.dense": ATTENTION, "mlp.fc1": FEED_FORWARD,
                                           "lm_head.bias": fallback.HEAD}),
    "granite": (dict(GQA), "GraniteForCausalLM", {"lm_head.weight": fallback.HEAD}),
    "cohere2": (dict(GQA), "Cohere2ForCausalLM", {"input_layernorm": LAYER_NORM}),
    "exaone4": (dict(GQA), "Exaone4ForCausalLM", {"self_attn.q_norm": LAYER_NORM}),
    "seed_oss": (dict(GQA, head_dim=8), "SeedOssForCausalLM", {"self_attn.q_proj.bias": ATTENTION}),
    "ernie4_5_moe": (dict(GQA, moe_num_experts=4, moe_k=2, moe_intermediate_size=16, moe_num_shared_experts=1,
                          moe_layer_start_index=1), "Ernie4_5_MoeForCausalLM",
                     {"mlp.experts.gate_up_proj": FEED_FORWARD, "mlp.shared_experts.up_proj": FEED_FORWARD,
                      "mlp.gate.weight": FEED_FORWARD}),
    "nemotron_h": (dict(vocab_size=96, hidden_size=32, num_hidden_layers=4, hybrid_override_pattern="M*-E",
                        num_attention_heads=4, num_key_value_heads=2, head_dim=8, intermediate_size=48,
                        mamba_num_heads=4, mamba_head_dim=8, n_groups=1, ssm_state_size=8, n_routed_experts=4,
                        num_experts_per_tok=2, moe_intermediate_size=16, moe_shared_expert_intermediate_size=16),
                   "NemotronHForCausalLM",
                   {"layers.0.mixer.A_log": fallback.STATE_SPACE, "layers.0.mixer.in_proj": fallback.STATE_SPACE,
                    "layers.0.mixer.out_proj": fallback.STATE_SPACE, "layers.1.mixer.q_proj": ATTENTION,
                    "layers.2.mixer.up_proj": FEED_FORWARD, "layers.3.mixer.experts": FEED_FORWARD}),
    "falcon_h1": (dict(GQA, head_dim=8, mamba_d_ssm=32, mamba_n_heads=4, mamba_d_head=8, mamba_d_state=8,
                       mamba_n_groups=1), "FalconH1ForCausalLM",
                  {"mamba.conv1d": fallback.STATE_SPACE, "self_attn.o_proj": ATTENTION,
                   "feed_forward.gate_proj": FEED_FORWARD}),
    "mistral3": (dict(text_config=dict(model_type="mistral", **GQA, head_dim=8),
                      vision_config=dict(model_type="pixtral", hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                                         num_attention_heads=4, head_dim=8, image_size=32, patch_size=8),
                      spatial_merge_size=2), "Mistral3ForConditionalGeneration",
                 {"model.vision_tower.": fallback.VISION, "model.multi_modal_projector.": fallback.VISION,
                  "language_model.embed_tokens": EMBEDDINGS}),
    "qwen3_vl": (dict(text_config=dict(**GQA, head_dim=8, rope_parameters=dict(
                          rope_type="default", mrope_section=[2, 1, 1], rope_theta=10000.0)),
                      vision_config=dict(depth=2, hidden_size=32, intermediate_size=48, num_heads=4, out_hidden_size=32,
                                         patch_size=8, spatial_merge_size=2, temporal_patch_size=2,
                                         num_position_embeddings=16, deepstack_visual_indexes=[1])),
                 "Qwen3VLForConditionalGeneration",
                 {"model.visual.": fallback.VISION, "language_model.layers.0.self_attn.q_proj": ATTENTION,
                  "language_model.layers.0.self_attn.k_norm": LAYER_NORM,
                  "lm_head": fallback.HEAD}),
    "starcoder2": (dict(GQA), "Starcoder2ForCausalLM", {"mlp.c_fc": FEED_FORWARD}),
    "mamba2": (dict(vocab_size=96, hidden_size=32, num_hidden_layers=2, num_heads=8, head_dim=8, state_size=8,
                    n_groups=1, expand=2), "Mamba2ForCausalLM",
               {"mixer.D": fallback.STATE_SPACE, "mixer.dt_bias": fallback.STATE_SPACE, "mixer.norm": LAYER_NORM,
                "backbone.embeddings": EMBEDDINGS}),
    "whisper": (dict(vocab_size=96, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                     decoder_attention_heads=4, encoder_ffn_dim=48, decoder_ffn_dim=48, num_mel_bins=8,
                     max_source_positions=16, max_target_positions=16, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                     decoder_start_token_id=1), "WhisperForConditionalGeneration",
                {"encoder_attn.k_proj": ATTENTION, "encoder.conv1": fallback.OTHER, "embed_positions": EMBEDDINGS}),
    "vit": (dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, image_size=32,
                 patch_size=8), "ViTModel",
            {"embeddings.cls_token": EMBEDDINGS, "patch_embeddings": EMBEDDINGS, "pooler.dense": fallback.HEAD,
             "mlp.fc1": FEED_FORWARD}),
}


def tiny_raw(model_type: str) -> dict:
    """The tiny config as a config.json holds it: transformers' config class, ``to_dict()``."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    return CONFIG_MAPPING[model_type](**CASES[model_type][0]).to_dict()


def reference(raw: dict, class_name: str):
    """transformers' own model for ``raw`` on the meta device, built directly from the class named in CASES."""
    import torch
    import transformers
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    with torch.device("meta"):
        return getattr(transformers, class_name)(CONFIG_MAPPING[raw["model_type"]].from_dict(raw))


@pytest.mark.parametrize("model_type", CASES)
def test_counted_as_transformers_builds_it(model_type):
    assert model_type not in FAMILIES  # no formula taught: the fallback is what answers it
    raw = tiny_raw(model_type)
    if model_type == "whisper":  # a published Whisper config names its class (AutoModelForCausalLM's is the decoder)
        raw["architectures"] = ["WhisperForConditionalGeneration"]
    class_name, spots = CASES[model_type][1:]
    result = fallback.count_by_transformers(raw, model_type)
    model = reference(raw, class_name)
    assert result.architecture == class_name
    assert [(t.name, t.shape) for t in result.tensors] == [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    assert result.total == sum(p.numel() for p in model.parameters())
    assert result.total == sum(result.components.values())
    assert all(t.component in fallback.GROUPS for t in result.tensors)
    aliases = [n for n, _ in model.named_parameters(remove_duplicate=False)]
    assert len(aliases) == len(result.tensors) + len(result.tied)  # a tied weight once, its other name in `tied`
    for fragment, group in spots.items():
        matched = [t for t in result.tensors if fragment in t.name]
        assert matched and {t.component for t in matched} == {group}, (fragment, {t.component for t in matched})


def test_tied_head_is_counted_once():
    raw = tiny_raw("falcon")  # FalconConfig ties its head to the token table by default
    result = fallback.count_by_transformers(raw)
    assert result.tied == {"lm_head.weight": "transformer.word_embeddings.weight"}
    untied = fallback.count_by_transformers({**raw, "tie_word_embeddings": False})
    assert untied.total - result.total == 96 * 32 and untied.tied == {}


def test_grouping_rules():
    cases = {("model.layers.0.post_attention_layernorm.weight", True): LAYER_NORM,
             ("model.layers.0.self_attn.q_norm.weight", True): LAYER_NORM,
             ("bert.encoder.layer.3.output.dense.weight", True): FEED_FORWARD,
             ("bert.encoder.layer.3.attention.output.dense.weight", True): ATTENTION,
             ("model.vision_tower.transformer.layers.0.attention_norm.weight", True): fallback.VISION,
             ("lm_head.weight", False): fallback.HEAD,
             ("bert.pooler.dense.bias", True): fallback.HEAD,
             ("model.layers.0.linear_attn.conv1d.weight", True): ATTENTION,
             ("backbone.layers.0.mixer.conv1d.weight", True): fallback.STATE_SPACE,
             ("model.encoder.conv2.weight", True): fallback.OTHER,
             ("transformer.layer.0.ff.layer_1.weight", True): FEED_FORWARD,  # XLNet
             ("model.shared.weight", True, "Embedding"): EMBEDDINGS,  # BART's table, by its module's class
             ("model.shared.weight", True, "Linear"): fallback.OTHER}
    assert {key: fallback.component_of(*key) for key in cases} == cases


def test_the_named_architecture_is_built_and_an_unknown_one_is_said():
    raw = {**tiny_raw("granite"), "architectures": ["GraniteModel"]}
    assert fallback.count_by_transformers(raw).architecture == "GraniteModel"
    result = fallback.count_by_transformers({**raw, "architectures": ["GraniteForPonies"]})
    assert result.architecture == "GraniteForCausalLM" and "no GraniteForPonies" in result.how


def test_a_large_config_builds_quickly():
    # a 180B-parameter shape (Falcon's new decoder: 80 layers, H = 14848, 232 query heads, 8 KV heads)
    raw = {"model_type": "falcon", "hidden_size": 14848, "num_hidden_layers": 80, "num_attention_heads": 232,
           "num_kv_heads": 8, "new_decoder_architecture": True, "vocab_size": 65024, "bias": False}
    start = time.perf_counter()
    result = fallback.count_by_transformers(raw)
    assert time.perf_counter() - start < 15
    H, L, V, A, kv = 14848, 80, 65024, 232, 8
    d = H // A
    layer = H * (A + 2 * kv) * d + H * H + 2 * 4 * H * H + 2 * 2 * H  # QKV, dense, 4H MLP, ln_attn and ln_mlp
    assert result.total == V * H + L * layer + 2 * H == 178_557_088_768  # the head tied to the table; ln_f


def test_a_config_too_slow_to_build_is_refused_naming_its_layers():
    raw = {"model_type": "falcon", "hidden_size": 8, "num_attention_heads": 1, "vocab_size": 8,
           "num_hidden_layers": 10_000_000}
    start = time.perf_counter()
    with pytest.raises(ConfigError) as caught:
        fallback.count_by_transformers(raw, limit_s=0.3)
    assert time.perf_counter() - start < 5
    assert caught.value.field == "num_hidden_layers" and "given up" in caught.value.problem


def test_the_build_limit_holds_off_the_main_thread_too():
    """No alarm signal outside the main thread (a server's threads, a widget's): the deadline still holds."""
    raw = {"model_type": "falcon", "hidden_size": 8, "num_attention_heads": 1, "vocab_size": 8,
           "num_hidden_layers": 10_000_000}
    outcome: list[BaseException | None] = []

    def build() -> None:
        try:
            fallback.count_by_transformers(raw, limit_s=0.3)
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001 - the outcome is the test
            outcome.append(error)

    start = time.perf_counter()
    worker = threading.Thread(target=build)
    worker.start()
    worker.join(30)
    assert not worker.is_alive() and time.perf_counter() - start < 20
    assert isinstance(outcome[0], ConfigError) and outcome[0].field == "num_hidden_layers", repr(outcome)


@pytest.mark.parametrize(("raw", "field"), [
    ({"model_type": "ponies"}, "model_type"),  # transformers does not know it either
    ({"model_type": "granite", "hidden_size": "wide"}, "hidden_size"),  # the config class refuses it
    ({"model_type": "falcon", "hidden_size": 100, "num_attention_heads": 12}, "hidden_size"),  # the model refuses it
    ({"model_type": "granite", "hidden_size": -5}, "model_type"),  # torch's message names no key
])
def test_refusals_name_the_field(raw, field):
    with pytest.raises(ConfigError) as caught:
        fallback.count_by_transformers(raw)
    assert caught.value.field == field and "\n" not in str(caught.value)


def test_cli_count_says_transformers_counted_it(write_config):
    raw = tiny_raw("falcon")
    result = run_cli("count", str(write_config(raw)), "--tensors")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    lines = result.stdout.splitlines()
    assert lines[1].startswith("counted by transformers") and 'no formula is taught for model_type "falcon"' in lines[1]
    total = fallback.count_by_transformers(raw).total
    assert any(line.startswith("total") and f"{total:,}" in line for line in lines)
    assert "transformer.h.1.mlp.dense_4h_to_h.weight" in result.stdout  # --tensors lists the tensors
    assert "tied weights counted once (lm_head.weight is transformer.word_embeddings.weight)" in result.stdout


def test_cli_count_json(write_config):
    raw = tiny_raw("qwen3_vl")
    doc = json.loads(run_cli("count", str(write_config(raw)), "--json").stdout)
    assert set(doc) == {"model", "model_type", "class", "num_labels", "names", "counted_by", "transformers_version",
                        "total", "components", "tied", "parameters"}
    assert (doc["counted_by"], doc["class"], doc["names"]) == ("transformers", "Qwen3VLForConditionalGeneration",
                                                              "transformers")
    model = reference(raw, "Qwen3VLForConditionalGeneration")
    assert doc["total"] == sum(p.numel() for p in model.parameters()) == sum(doc["components"].values())
    assert [p["name"] for p in doc["parameters"]] == [n for n, _ in model.named_parameters()]
    assert sum(p["count"] for p in doc["parameters"]) == doc["total"]
    assert doc["components"]["vision"] == sum(p.numel() for p in model.model.visual.parameters())


def test_cli_memory_json(write_config):
    raw = tiny_raw("mamba2")
    doc = json.loads(run_cli("memory", str(write_config(raw)), "--json").stdout)
    n, n_t = doc["parameters"], doc["parameter_tensors"]
    model = reference(raw, "Mamba2ForCausalLM")
    assert (n, n_t) == (sum(p.numel() for p in model.parameters()), len(list(model.parameters())))
    assert doc["counted_by"] == "transformers"
    assert doc["weights"] == {"fp32": 4 * n, "fp16": 2 * n, "bf16": 2 * n, "int8": n, "int4": -(-n // 2)}
    assert {recipe: state["total"] for recipe, state in doc["training_state"].items()} == {
        "fp32 AdamW": 16 * n + 4 * n_t, "mixed-precision AdamW": 16 * n + 4 * n_t}


def test_cli_refusals_are_one_line(write_config):
    path = str(write_config(tiny_raw("granite")))
    for args in (("flops", path, "--batch", "1", "--seq-len", "8"),
                 ("budget", path, "--tokens", "1e9", "--gpu", "H100-SXM", "--mfu", "0.4"),
                 ("memory", path, "--seq-len", "8"), ("count", path, "--names", "checkpoint")):
        result = run_cli(*args)
        assert_refused(result, "model_type")
        assert '"granite"' in result.stderr and "only count and memory" in result.stderr
    assert_refused(run_cli("count", str(write_config({"model_type": "falcon", "hidden_size": 100,
                                                       "num_attention_heads": 12}))), "hidden_size")


def test_without_transformers_the_message_says_how_to_get_it(write_config):
    path = str(write_config(tiny_raw("granite")))
    code = ("import sys, runpy; sys.modules['transformers'] = None  # `import transformers` now fails\n"
            f"sys.argv = ['helpers', 'count', {path!r}]\n"
            "runpy.run_module('helpers', run_name='__main__')")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert_refused(result, "model_type")
    assert "pip install -e .[hf]" in result.stderr


def test_class_option_builds_another_class_or_refuses():
    raw = tiny_raw("falcon")
    assert fallback.count_by_transformers(raw, model_class="FalconModel").architecture == "FalconModel"
    for model_class in ("BertModel", "FalconForPonies"):
        with pytest.raises(ConfigError) as caught:
            fallback.count_by_transformers(raw, model_class=model_class)
        assert caught.value.field == "--class"


UNMODELLED = [  # (a taught family's config with a key it declares refused, the key, the class transformers builds)
    ({"model_type": "bert", "vocab_size": 40, "hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 4,
      "intermediate_size": 32, "max_position_embeddings": 16, "position_embedding_type": "relative_key"},
     "position_embedding_type", "BertModel"),
    ({"model_type": "albert", "vocab_size": 40, "embedding_size": 8, "hidden_size": 16, "num_hidden_layers": 2,
      "num_attention_heads": 4, "intermediate_size": 32, "max_position_embeddings": 16,
      "position_embedding_type": "relative_key_query"}, "position_embedding_type", "AlbertModel"),
]


@pytest.mark.parametrize(("raw", "key", "built"), UNMODELLED, ids=[k for _, k, _ in UNMODELLED])
def test_a_key_the_formulas_do_not_model_is_counted_by_transformers(write_config, raw, key, built):
    """Good input is never refused: a config transformers builds with a key its family declares unmodelled is
    answered by ``count`` and ``memory`` as an untaught type is (transformers' class on meta, the key named), while
    ``flops``, which needs the formulas, gives the engine's own one-line refusal naming the key."""
    path = str(write_config(raw))
    count = run_cli("count", path)
    assert count.returncode == 0 and count.stderr == "", count.stderr
    assert f"no formula is taught for {key} = " in count.stdout.splitlines()[1]
    total = sum(p.numel() for p in reference(raw, built).parameters())
    assert any(line.startswith("total") and f"{total:,}" in line for line in count.stdout.splitlines())
    doc = json.loads(run_cli("memory", path, "--json").stdout)
    assert doc["parameters"] == total and doc["counted_by"] == "transformers"
    flops = run_cli("flops", path)
    assert flops.returncode == 2 and flops.stdout == "" and flops.stderr.startswith(f"error: {key}:")
    assert len(flops.stderr.strip().splitlines()) == 1
