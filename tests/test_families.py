"""Every registered family is present everywhere it must be, and the engine's cost does not grow with the layers.

A family of ``helpers.families.FAMILIES`` must read its config (transformers' defaults), lay out tensors that all
carry a kind, have a formula for every component and for its FLOPs, a KV cache if it is a decoder, a reference
class in ``helpers.torch_ref``, a transformers class to cross-check against (used by
``tests/test_crosscheck_transformers.py`` and ``tests/test_flops.py``, which iterate over the registry), a
hypothesis strategy and a tiny config in ``tests/strategies.py``, and a shipped config in ``data/models/``.
Then Mistral, the family added last to prove the design: count, FLOPs and KV cache against transformers.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from helpers import ConfigError, count_model, load_config, param_table, parse_config
from helpers.config import MODELS_DIR
from helpers.families import FAMILIES
from helpers.flops import ATTENTION_SCORES, flop_formulas, forward_flops, max_seq_len
from helpers.memory import Memory, kv_cache_bytes, kv_cache_formula, parameter_tensors
from helpers.params import BIAS, CONVOLUTION, EXPERT, EXPERT_BIAS, KINDS, MATRIX, NORM, TABLE, VISION, param_layout

from .conftest import (
    ROOT, assert_answered_where_transformers_runs, assert_refused, held_bytes, hf_model, run_cli,
)
from .strategies import STRATEGIES, TINY
from .test_config import config_field

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
StrictDataclassError = pytest.importorskip("huggingface_hub.errors").StrictDataclassError
transformers.logging.set_verbosity_error()

from helpers import torch_ref  # noqa: E402

SHIPPED = {name: json.loads((MODELS_DIR / f"{name}.json").read_text())["model_type"] for name in
           sorted(p.stem for p in MODELS_DIR.glob("*.json"))}


@pytest.mark.parametrize("model_type", list(FAMILIES))
def test_every_family_is_present_everywhere(model_type):
    family = FAMILIES[model_type]
    assert family.model_type == model_type
    # config reading: transformers' defaults, for every size and flag the family reads
    theirs = getattr(transformers, family.architecture).config_class()
    assert theirs.model_type == model_type
    c = parse_config({"model_type": model_type})
    for size in family.sizes:
        value = config_field(theirs, size.key)  # None: no such field (Qwen2 reads head_dim by getattr)
        if value is not None:
            assert c[size.symbol] == value, size.key
    for flag in family.flags:
        assert bool(config_field(theirs, flag.key)) == flag.default, flag.key
    # the layout: every tensor has a kind; matrices say which tokens they multiply, nothing else does but a tied table
    for p, _ in param_layout(c).rows():
        assert p.kind in KINDS, p.name
        if p.component == VISION:  # a vision tower (convolutions, a probe token): no text token runs through it
            assert p.tokens == "", p.name
        elif p.kind == MATRIX:
            # "L*B*S": ALBERT's one shared layer, its parameters counted once, its matmuls run L times
            assert p.tokens in ("B*S", "B", "L*B*S") and len(p.shape) == 2, p.name
        elif p.kind == TABLE:
            assert p.tokens in ("", "B*S") and len(p.shape) == 2, p.name  # "B*S": the tied LM head
        elif p.kind == EXPERT:  # E fused experts, each routed token slot multiplying one expert's slice
            assert p.tokens == "B*S*k" and len(p.shape) == 3, p.name
        elif p.kind == EXPERT_BIAS:  # their biases, E × out: each routed token slot adds one expert's row
            assert p.tokens == "B*S*k" and len(p.shape) == 2, p.name
        elif p.kind == CONVOLUTION:  # a depthwise kernel, C × 1 × K_c, over the positions it computes
            assert p.tokens and len(p.shape) == 3 and p.shape[1] == 1, p.name
        else:
            assert p.kind in (BIAS, NORM) and p.tokens == "" and len(p.shape) == 1, p.name
    # parameter formulas (count_model checks them against the tensors), FLOP formulas with attention scores
    count_model(c)
    assert ATTENTION_SCORES in flop_formulas(c)
    forward_flops(c, 1, 4)
    # a decoder has a KV cache; an encoder none
    causal = family.architecture.endswith(("ForCausalLM", "LMHeadModel", "ForConditionalGeneration"))
    assert family.is_decoder == causal == (kv_cache_formula(c) is not None)
    # the reference class, the hypothesis strategy, a tiny config, a shipped config
    assert isinstance(getattr(torch_ref, family.torch_ref), type)
    assert model_type in STRATEGIES and TINY[model_type]["model_type"] == model_type
    assert model_type in SHIPPED.values(), f"no data/models/*.json of model_type {model_type}"
    tiny = parse_config(TINY[model_type])
    assert torch_ref.matches(param_table(tiny), torch_ref.build(tiny))


def test_the_registry_and_the_test_tables_agree():
    assert set(STRATEGIES) == set(TINY) == set(FAMILIES)
    assert set(SHIPPED.values()) == set(FAMILIES)


@pytest.mark.parametrize("model_type", [t for t, f in FAMILIES.items() if f.is_decoder])
@pytest.mark.parametrize("S", [3, 7])  # Mistral's tiny window is 4: 7 passes it
def test_kv_cache_is_what_transformers_returns_for_every_decoder(model_type, S):
    raw = TINY[model_type]
    c = parse_config(raw)
    torch.manual_seed(0)
    model = getattr(transformers, c.architecture)(transformers.AutoConfig.for_model(**raw)).eval()
    B = 2
    input_ids = torch.randint(0, c["V"], (B, S))
    # an encoder-decoder (T5): the decoder reads the same S tokens; its EncoderDecoderCache holds two caches
    extra = {"decoder_input_ids": input_ids} if model.config.is_encoder_decoder else {}
    with torch.no_grad():
        cache = model(input_ids=input_ids, use_cache=True, **extra).past_key_values
    caches = (cache.self_attention_cache, cache.cross_attention_cache) if extra else (cache,)
    measured = sum(held_bytes(one) for one in caches)  # keys and values, and a linear attention's states
    assert measured == kv_cache_bytes(c, B, S, "fp32")


# --- the cost of counting does not grow with the layers -----------------------------------------------------

@pytest.mark.parametrize("name", ["bert-base-uncased", "gpt2", "llama-7b", "mistral-7b-v0.1"])
def test_the_layout_is_built_once_per_layer_kind(name):
    raw = json.loads((MODELS_DIR / f"{name}.json").read_text())
    key = {"gpt2": "n_layer"}.get(raw["model_type"], "num_hidden_layers")
    small, huge = (parse_config({**raw, key: L}) for L in (1, 10**7))
    assert len(list(param_layout(small).rows())) == len(list(param_layout(huge).rows()))
    per_layer = count_model(parse_config({**raw, key: 2})).total - count_model(small).total
    assert count_model(huge).total == count_model(small).total + (10**7 - 1) * per_layer
    assert parameter_tensors(huge) == len(param_table(small)) + (10**7 - 1) * (
        len(param_table(parse_config({**raw, key: 2}))) - len(param_table(small)))
    assert Memory(huge, 1, 16, "fp16").training() > 0
    c = parse_config({**raw, key: 3})
    assert param_layout(c).expand() == param_table(c) and count_model(c).params == tuple(param_table(c))


def test_ten_million_layers_on_the_command_line(write_config):
    """``count``, ``flops`` and ``memory`` answer for 10⁷ layers (before the compact layout: over a minute)."""
    path = str(write_config({"model_type": "llama", "num_hidden_layers": 10**7}))
    for args in (("count", path), ("flops", path, "--batch", "1", "--seq-len", "8"), ("memory", path, "--json")):
        result = subprocess.run([sys.executable, "-m", "helpers", *args], capture_output=True, text=True, cwd=ROOT,
                                timeout=60)
        assert result.returncode == 0, result.stderr
    assert "L=10000000" in run_cli("count", path).stdout


# --- Mistral: LLaMA's tensors, a sliding-window cache --------------------------------------------------------


def test_mistral_7b_is_what_transformers_builds():
    raw = json.loads((MODELS_DIR / "mistral-7b-v0.1.json").read_text())
    c = load_config("mistral-7b-v0.1")
    model = hf_model(raw)
    assert [(p.name, p.shape) for p in param_table(c)] == [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    assert count_model(c).total == sum(p.numel() for p in model.parameters()) == 7_241_732_096
    assert (c["A_kv"], c["d_k"], c["W"], max_seq_len(c)) == (8, 128, 4096, None)
    input_ids = torch.zeros(1, 128, dtype=torch.long, device="meta")
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        model(input_ids, use_cache=True)
    assert counter.get_total_flops() == forward_flops(c, 1, 128).forward


@pytest.mark.parametrize("window", [2, 4, 6, None])
def test_mistral_cache_keeps_the_last_window_minus_one_tokens(window):
    raw = {**TINY["mistral"], "sliding_window": window}
    c = parse_config(raw)
    model = hf_model(raw, "cpu").eval()
    for S in (1, 3, 4, 5, 6, 11):
        with torch.no_grad():
            cache = model(input_ids=torch.randint(0, c["V"], (2, S)), use_cache=True).past_key_values
        kept = {layer.keys.shape[-2] for layer in cache.layers}
        assert kept == {S if window is None else min(S, window - 1)}
        measured = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
        assert measured == kv_cache_bytes(c, 2, S, "fp32")


def test_mistral_7b_cache_stops_growing_at_the_window():
    c = load_config("mistral-7b-v0.1")
    per_token = 2 * c["L"] * c["A_kv"] * c["d_k"] * 2  # fp16 bytes
    assert kv_cache_bytes(c, 1, 4095) == kv_cache_bytes(c, 1, 32768) == 4095 * per_token
    assert kv_cache_bytes(c, 1, 100) == 100 * per_token


MISTRAL_BAD = [
    ({"sliding_window": "4096"}, "sliding_window"),  # MistralConfig refuses it too
]


@pytest.mark.parametrize(("change", "field"), MISTRAL_BAD)
def test_mistral_bad_configs_are_refused_in_one_line(write_config, change, field):
    raw = {**json.loads((MODELS_DIR / "mistral-7b-v0.1.json").read_text()), **change}
    with pytest.raises(ConfigError) as info:
        parse_config(raw)
    assert info.value.field == field
    assert_refused(run_cli("count", str(write_config(raw))), field)


MISTRAL_BUILT = [  # (change, the key flops and memory refuse, the key memory alone refuses; None: they answer)
    ({"sliding_window": 1}, None, None),  # the cache's slice [-0:] keeps every token
    ({"sliding_window": 0}, None, "sliding_window"),  # the cached forward pass fails (tests/test_decoder_cache.py)
    ({"num_key_value_heads": 3}, "num_key_value_heads", None),  # 32 query heads do not share 3 key/value heads
    ({"hidden_size": 4100}, None, None),  # d_k = 4100 // 32 = 128: q_proj 4096 × 4100
    ({"layer_types": ["full_attention"] * 32}, None, None),  # the cache only: every layer global
    ({"head_dim": 0}, None, None),  # MistralAttention reads head_dim or H // A: 128, as without the key
]


@pytest.mark.parametrize(("change", "forward", "cache"), MISTRAL_BUILT)
def test_mistral_unusual_configs_are_counted_and_refused_only_where_transformers_fails(write_config, change, forward,
                                                                                       cache):
    """transformers builds each: count answers, tensor by tensor; flops and memory refuse (one line naming the key)
    exactly where transformers' forward pass fails, and answer its FLOPs where it runs."""
    raw = {**json.loads((MODELS_DIR / "mistral-7b-v0.1.json").read_text()), **change}
    assert_answered_where_transformers_runs(raw, write_config(raw), forward, cache)


def test_mistral_nulls_read_as_transformers_reads_them():
    """``sliding_window: null`` is no window (every token cached); ``num_key_value_heads: null`` is refused, as
    transformers' MistralConfig refuses it (an int field)."""
    c = parse_config({"model_type": "mistral", "sliding_window": None})
    assert "W" not in c.sizes and c["A_kv"] == 8
    assert kv_cache_formula(c) == "2*L*A_kv*d_k*S*B"
    assert transformers.MistralConfig(sliding_window=None).sliding_window is None
    with pytest.raises(ConfigError, match="null"):
        parse_config({"model_type": "mistral", "num_key_value_heads": None})
    with pytest.raises(StrictDataclassError, match="num_key_value_heads"):
        transformers.MistralConfig(num_key_value_heads=None)


# --- OPT: positions with an offset of 2, projections when d_e != H, post-LayerNorm opt-350m -------------------

@pytest.mark.parametrize(("name", "total"), [("opt-125m", 125_239_296), ("opt-350m", 331_196_416)])
def test_opt_is_what_transformers_builds(name, total):
    raw = json.loads((MODELS_DIR / f"{name}.json").read_text())
    c = load_config(name)
    with torch.device("meta"):
        model = transformers.OPTForCausalLM(transformers.AutoConfig.for_model(**raw))
    assert [(p.name, p.shape) for p in param_table(c)] == [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    assert count_model(c).total == sum(p.numel() for p in model.parameters()) == total
    names = {p.name for p in param_table(c)}
    assert ("model.decoder.final_layer_norm.weight" in names) == (name == "opt-125m")  # 350m: post-LN, no final norm
    assert ("model.decoder.project_in.weight" in names) == (name == "opt-350m")  # 350m: d_e = 512, H = 1024
    assert param_table(c)[1].shape == (2048 + 2, c["H"])  # the offset of 2


OPT_BAD = [
    ({"num_attention_heads": 7}, "num_attention_heads"),
    ({"word_embed_proj_dim": 0}, "word_embed_proj_dim"),
    ({"vocab_size": 1}, "pad_token_id"),
    ({"num_hidden_layers": -1}, "num_hidden_layers"),
    ({"enable_bias": "yes"}, "enable_bias"),
    ({"do_layer_norm_before": 0}, "do_layer_norm_before"),
]


@pytest.mark.parametrize(("change", "field"), OPT_BAD)
def test_opt_bad_configs_are_refused_in_one_line(write_config, change, field):
    raw = {**json.loads((MODELS_DIR / "opt-125m.json").read_text()), **change}
    with pytest.raises(ConfigError) as info:
        parse_config(raw)
    assert info.value.field == field
    assert_refused(run_cli("count", str(write_config(raw))), field)


# --- T5: an encoder-decoder, always tied in transformers 5.23 ---------------------------------------------

@pytest.mark.parametrize(("name", "total"), [("t5-small", 60_506_624), ("flan-t5-base", 222_903_552)])
def test_t5_is_what_transformers_builds(name, total):
    raw = json.loads((MODELS_DIR / f"{name}.json").read_text())
    c = load_config(name)
    with torch.device("meta"):
        model = transformers.T5ForConditionalGeneration(transformers.AutoConfig.for_model(**raw))
    assert [(p.name, p.shape) for p in param_table(c)] == [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    assert count_model(c).total == sum(p.numel() for p in model.parameters()) == total
    assert model.lm_head.weight is model.shared.weight  # flan-t5-base's file says tie_word_embeddings: false
    relative = [p.name for p in param_table(c) if "relative_attention_bias" in p.name]
    assert relative == [f"{stack}.block.0.layer.0.SelfAttention.relative_attention_bias.weight"
                        for stack in ("encoder", "decoder")]
    assert c["G"] == (2 if name == "flan-t5-base" else 1)


T5_BAD = [
    ({"feed_forward_proj": "gated-gelu-new"}, "feed_forward_proj"),
    ({"feed_forward_proj": "relu-gelu"}, "feed_forward_proj"),
    ({"feed_forward_proj": 3}, "feed_forward_proj"),
    ({"num_heads": 0}, "num_heads"),
    ({"d_kv": 0}, "d_kv"),
    ({"num_decoder_layers": -1}, "num_decoder_layers"),
    ({"layer_types": ["full_attention"] * 3}, "layer_types"),  # T5Config wants one per encoder layer (12)
]


@pytest.mark.parametrize(("change", "field"), T5_BAD)
def test_t5_bad_configs_are_refused_in_one_line(write_config, change, field):
    raw = {**json.loads((MODELS_DIR / "flan-t5-base.json").read_text()), **change}
    with pytest.raises(ConfigError) as info:
        parse_config(raw)
    assert info.value.field == field
    assert_refused(run_cli("count", str(write_config(raw))), field)


def test_t5_num_hidden_layers_alias_leaves_the_decoder_at_num_layers_default():
    """T5Config copies num_layers (6 when absent) into num_decoder_layers BEFORE applying the alias num_hidden_layers."""
    for raw, (L, L_d) in [({"model_type": "t5", "num_hidden_layers": 3}, (3, 6)),
                          ({"model_type": "t5", "num_layers": 2, "num_hidden_layers": 3}, (3, 2)),
                          ({"model_type": "t5", "num_hidden_layers": 3, "num_decoder_layers": None}, (3, 6)),
                          ({"model_type": "t5", "num_layers": 0}, (0, 0))]:
        c = parse_config(raw)
        config = transformers.AutoConfig.for_model(**raw)
        assert (c["L"], c["L_d"]) == (config.num_layers, config.num_decoder_layers) == (L, L_d)
        with torch.device("meta"):
            model = transformers.T5ForConditionalGeneration(config)
        assert [(p.name, p.shape) for p in param_table(c)] == [(n, tuple(p.shape)) for n, p in model.named_parameters()]
    assert count_model(parse_config({"model_type": "t5", "num_hidden_layers": 3})).total == 51_066_368  # not 38,478,848


@pytest.mark.parametrize("extra", [{"sliding_window": 3}, {"attention_chunk_size": 4},
                                   {"sliding_window": 3, "layer_types": ["sliding_attention", "full_attention"]}])
@pytest.mark.parametrize("model_type", ["gpt2", "opt", "gpt_neox", "t5"])
def test_cache_only_keys_change_no_tensor_and_the_cache_keeps_what_transformers_keeps(model_type, extra):
    """sliding_window / attention_chunk_size / layer_types: no parameter changes; the KV cache is DynamicCache's."""
    raw = {**TINY[model_type], **extra}
    if model_type == "t5":
        raw = {**raw, "num_layers": 2, "num_decoder_layers": 2}
    c, plain = parse_config(raw), parse_config({k: v for k, v in raw.items() if k not in extra})
    assert param_table(c) == param_table(plain)
    config = transformers.AutoConfig.for_model(**raw)
    config._attn_implementation = "eager"
    model = getattr(transformers, c.architecture)(config).eval()
    ids = torch.zeros(2, 7, dtype=torch.long)
    with torch.no_grad():
        out = model(ids, use_cache=True, **({"decoder_input_ids": ids} if model_type == "t5" else {}))
    cache = out.past_key_values
    caches = (cache.self_attention_cache, cache.cross_attention_cache) if model_type == "t5" else (cache,)
    held = sum(t.numel() * t.element_size() for one in caches for layer in one.layers for t in (layer.keys, layer.values))
    assert kv_cache_bytes(c, 2, 7, "fp32") == held < kv_cache_bytes(plain, 2, 7, "fp32")
