"""Quantized checkpoints: ``stored_weight_bytes`` exact against the libraries that lay them out.

FP8 with block scales: equal, byte for byte, to what transformers' FP8 quantizer turns the model into on the meta
device (``AutoHfQuantizer.from_config(..., pre_quantized=True).preprocess_model``, the model built in bf16 as
``from_pretrained(dtype=torch.bfloat16)`` builds it), on random small configs of several families and quantization
settings; qwen3-8b-fp8 9,437,399,040 bytes with fp32 scales (../shared/REFERENCE.md), 9,436,551,168 as its files store
them (bf16 scales, the dtype data/models records). MXFP4: gpt-oss-120b's safetensors files add up
to 65,248,815,744 bytes. bitsandbytes 4-bit: the bytes ``functional.quantize_4bit`` holds for real tensors. GPTQ and
AWQ: their packed layouts, small cases by hand. An unknown ``quant_method``: one line naming it, the rest of
``memory`` answered.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import load_config, parse_config
from helpers.cli import main
from helpers.config import ConfigError, published, raw_config
from helpers.lessons.moe import fp8_scales
from helpers.quantized import SCALE_DTYPE_KEY, converted_modules, skipped, stored_weights

from .conftest import hf_model
from .strategies import STRATEGIES

RANDOM = settings(max_examples=12, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow])
FP8 = {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]}


def transformers_quantized(raw: dict):
    """transformers' model for ``raw`` on the meta device, built in bf16 and turned by its quantizer into what a
    pre-quantized checkpoint loads into (``preprocess_model``, before any weight is read)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from transformers.quantizers.auto import AutoHfQuantizer

    transformers.logging.set_verbosity_error()
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)  # as from_pretrained(dtype=torch.bfloat16) builds the model
    try:
        model = hf_model({k: v for k, v in raw.items() if k != "quantization_config"})
        model.config.quantization_config = raw["quantization_config"]
        quantizer = AutoHfQuantizer.from_config(raw["quantization_config"], pre_quantized=True)
        quantizer.preprocess_model(model=model, dtype=torch.bfloat16, device_map={"": "cpu"})
    finally:
        torch.set_default_dtype(before)
    return model


def transformers_stored(raw: dict) -> int:
    """Bytes of every parameter transformers' quantizer leaves on the meta device (tied weights once)."""
    return sum(p.numel() * p.element_size() for p in transformers_quantized(raw).parameters())


def test_qwen3_8b_fp8_as_transformers_holds_it_and_its_files_store_it():
    raw = raw_config("qwen3-8b-fp8")
    held = stored_weights(parse_config({k: v for k, v in raw.items() if k != SCALE_DTYPE_KEY}))
    assert held.total == 9_437_399_040  # ../shared/REFERENCE.md: the FP8 quantizer on the meta device, fp32 scales
    rest = 2 * 151936 * 4096 * 2 + 36 * 2 * (2 * 4096 + 2 * 128) + 2 * 4096  # tables, head and norms in bf16
    scales = 36 * (2 * 32 * 32 + 2 * 8 * 32 + 3 * 96 * 32)  # one per 128 × 128 tile of q, o, k, v, gate, up, down
    assert held.by_dtype == {"bf16": rest, "fp8": held.by_dtype["fp8"], "fp32": 4 * scales}
    assert held.by_dtype["fp8"] == 36 * (2 * 4096 * 4096 + 2 * 1024 * 4096 + 3 * 12288 * 4096)
    stored = stored_weights(load_config("qwen3-8b-fp8"))  # the files: bf16 scales (data/models records the dtype)
    assert raw[SCALE_DTYPE_KEY] == "bfloat16" and stored.by_dtype == {"bf16": rest + 2 * scales, "fp8": held.by_dtype["fp8"]}
    assert stored.total == 9_436_551_168 == held.total - 2 * scales and "bf16 weight_scale_inv" in stored.layout
    with pytest.raises(ConfigError, match=SCALE_DTYPE_KEY):
        stored_weights(parse_config({**raw, SCALE_DTYPE_KEY: "int8"}))


def test_gpt_oss_mxfp4_as_its_files_add_up():
    for row in published()["checkpoint_bytes"]["rows"]:
        assert stored_weights(load_config(row["config"])).total == row["value"]  # 65,248,815,744 for gpt-oss-120b
    for name, size in published()["gpt_oss_card"]["checkpoint_size"].items():  # the card's 60.8GiB and 12.8GiB
        assert f"{stored_weights(load_config(name)).total / 2**30:.1f}GiB" == size
    stored = stored_weights(load_config("gpt-oss-20b"))
    blocks = 24 * 32 * (2 * 2880 * 90 + 2880 * 90)  # 32 experts: gate_up 5760 × 90 blocks, down 2880 × 90
    assert stored.by_dtype["uint8 (fp4 blocks)"] == 16 * blocks and stored.by_dtype["uint8 (e8m0 scales)"] == blocks


def _fp8_settings():
    return st.fixed_dictionaries({
        "quant_method": st.just("fp8"), "activation_scheme": st.sampled_from(["dynamic", "static"]),
        "weight_block_size": st.sampled_from([[128, 128], [16, 16], [8, 32], [3, 5]]),
        "modules_to_not_convert": st.sampled_from([None, ["lm_head"], ["model.layers.0.self_attn", "lm_head"],
                                                   ["model.layers.*.mlp.gate", "q_proj"], []]),
    }).map(lambda q: {k: v for k, v in q.items() if v is not None})


@pytest.mark.parametrize("model_type", ["llama", "qwen2", "qwen3_moe", "deepseek_v3", "mixtral", "gpt2", "glm4_moe", "t5",
                                        "qwen3_next", "phi3"])
@RANDOM
@given(data=st.data())
def test_fp8_equals_transformers_quantizer_on_meta(model_type, data):
    raw = {**data.draw(STRATEGIES[model_type]), "quantization_config": data.draw(_fp8_settings()),
           "torch_dtype": "bfloat16"}
    try:
        config = parse_config(raw)
    except ConfigError:
        return
    assert stored_weights(config).total == transformers_stored(raw)


def test_fp8_without_blocks_and_bert_default_skips():
    raw = {k: v for k, v in raw_config("bert-base-uncased").items() if not k.startswith("_")}
    raw.update(num_hidden_layers=1, quantization_config={"quant_method": "fp8"}, torch_dtype="bfloat16")
    assert stored_weights(parse_config(raw)).total == transformers_stored(raw)


def test_deepseek_v3_scales_are_notebook_09s_fp8_scales():
    config = load_config("deepseek-v3")  # its quantization_config: fp8, 128 × 128 blocks, no modules listed
    assert stored_weights(config).by_dtype["fp32"] == 4 * fp8_scales(config)


def test_skip_patterns_as_transformers_matches_them():
    assert skipped("model.layers.1.mlp", ["model.layers.1"]) and not skipped("model.layers.11.mlp", ["model.layers.1"])
    assert skipped("model.layers.11.self_attn", ["model.layers.*.self_attn"]) and skipped("a.b.fc1", ["fc1"])
    assert not skipped("model.layers.0.mlp.gate_proj", ["model.layers.*.mlp.gate"])


def test_bitsandbytes_4bit_bytes_as_quantize_4bit_holds_them():
    torch = pytest.importorskip("torch")
    functional = pytest.importorskip("bitsandbytes.functional")
    raw = {"model_type": "llama", "vocab_size": 50, "hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4,
           "num_key_value_heads": 2, "num_hidden_layers": 1, "torch_dtype": "bfloat16",
           "quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": True,
                                   "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": True}}
    config = parse_config(raw)
    held = 0
    for shape in [(64, 64), (32, 64), (32, 64), (64, 64), (96, 64), (96, 64), (64, 96)]:
        packed, state = functional.quantize_4bit(torch.randn(shape), blocksize=64, quant_type="nf4",
                                                 compress_statistics=True)
        tensors = [packed, state.absmax, state.code, state.state2.absmax, state.state2.code, state.offset]
        held += sum(t.numel() * t.element_size() for t in tensors)
    plain = 2 * (2 * 50 * 64 + 3 * 64)  # embed_tokens, lm_head, three norms
    assert stored_weights(config).total == held - 7 * 4 + plain  # the files keep each offset in the JSON state
    single = stored_weights(replace(config, quantization={**raw["quantization_config"], "bnb_4bit_use_double_quant": False}))
    assert single.by_dtype["fp32"] == 4 * 7 * 16 + 4 * sum(-(-n // 64) for n in (4096, 2048, 2048, 4096, 6144, 6144, 6144))


@pytest.mark.parametrize("model_type", ["llama", "gpt2", "mixtral", "deepseek_v3", "bert", "t5", "gpt_oss"])
@RANDOM
@given(data=st.data())
def test_bitsandbytes_converts_the_modules_transformers_converts(model_type, data):
    bnb = pytest.importorskip("bitsandbytes")
    setting = data.draw(st.sampled_from([{"load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}, {"load_in_8bit": True},
                                         {"load_in_4bit": True, "llm_int8_skip_modules": ["o_proj", "lm_head"]},
                                         {"load_in_8bit": True, "llm_int8_skip_modules": ["model.layers.0"]}]))
    raw = {**data.draw(STRATEGIES[model_type]), "quantization_config": {"quant_method": "bitsandbytes", **setting}}
    try:
        config = parse_config(raw)
    except ConfigError:
        return
    model = transformers_quantized(raw)
    linear = (bnb.nn.Linear4bit, bnb.nn.Linear8bitLt)
    assert converted_modules(config) == {name for name, m in model.named_modules() if isinstance(m, linear)}


def test_bitsandbytes_8bit_bytes_as_int8_vectorwise_quant_holds_them():
    torch = pytest.importorskip("torch")
    functional = pytest.importorskip("bitsandbytes.functional")
    raw = {"model_type": "gpt2", "vocab_size": 50, "n_embd": 32, "n_head": 4, "n_layer": 1, "n_positions": 8,
           "torch_dtype": "float16", "quantization_config": {"quant_method": "bitsandbytes", "load_in_8bit": True}}
    held = 0
    for out, inp in [(96, 32), (32, 32), (128, 32), (32, 128)]:  # c_attn, c_proj, c_fc, mlp.c_proj as (out, in)
        values, rows, _ = functional.int8_vectorwise_quant(torch.randn(out, inp, dtype=torch.float16))
        held += values.numel() * values.element_size() + rows.numel() * rows.element_size() + 1  # + weight_format
    plain = 2 * (50 * 32 + 8 * 32 + 2 * 2 * 32 + 2 * 32 + 96 + 32 + 128 + 32)  # tables, norms, the four biases
    assert stored_weights(parse_config(raw)).total == held + plain


@pytest.mark.parametrize("setting", [{"load_in_4bit": True, "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": True},
                                     {"load_in_4bit": True, "bnb_4bit_quant_type": "fp4"}, {"load_in_8bit": True},
                                     {"load_in_4bit": True, "llm_int8_skip_modules": ["o_proj", "lm_head"]}])
def test_bitsandbytes_as_save_pretrained_writes_it(tmp_path, setting):
    """A tiny model loaded through bitsandbytes on the CPU and saved: its safetensors tensors, the per-layer JSON
    states aside, add up to stored_weight_bytes of the config.json it writes."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("bitsandbytes")
    transformers = pytest.importorskip("transformers")
    safetensors = pytest.importorskip("safetensors")
    transformers.logging.set_verbosity_error()
    raw = {"model_type": "qwen2", "vocab_size": 50, "hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4,
           "num_key_value_heads": 2, "num_hidden_layers": 2, "tie_word_embeddings": False}
    torch.manual_seed(0)
    hf_model(raw, "cpu").to(torch.bfloat16).save_pretrained(tmp_path / "plain")
    model = transformers.AutoModelForCausalLM.from_pretrained(
        tmp_path / "plain", device_map="cpu", dtype=torch.bfloat16,
        quantization_config=transformers.BitsAndBytesConfig(**setting, bnb_4bit_compute_dtype=torch.bfloat16))
    model.save_pretrained(tmp_path / "saved")
    by: dict[str, int] = {}
    with safetensors.safe_open(tmp_path / "saved" / "model.safetensors", "pt") as f:
        for key in f.keys():
            if ".quant_state.bitsandbytes__" not in key:
                tensor = f.get_tensor(key)
                by[str(tensor.dtype)] = by.get(str(tensor.dtype), 0) + tensor.numel() * tensor.element_size()
    config = load_config(tmp_path / "saved" / "config.json")
    assert config.quantization["quant_method"] == "bitsandbytes"
    assert stored_weights(config).total == sum(by.values())


def test_gptq_and_awq_layouts_by_hand():
    raw = {"model_type": "llama", "vocab_size": 50, "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
           "num_key_value_heads": 4, "num_hidden_layers": 1, "torch_dtype": "float16"}
    shapes = [(256, 256)] * 4 + [(512, 256)] * 2 + [(256, 512)]  # (out, in)
    plain = 2 * (2 * 50 * 256 + 3 * 256)
    gptq = parse_config({**raw, "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128}})
    want = sum(4 * (i // 8 * o + i // 128 * o // 8 + i) + 2 * (i // 128) * o for o, i in shapes)
    assert stored_weights(gptq).total == want + plain
    awq = parse_config({**raw, "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128}})
    want = sum(4 * (i * o // 8 + i // 128 * o // 8) + 2 * (i // 128) * o for o, i in shapes)
    assert stored_weights(awq).total == want + plain
    autoawq = parse_config({**raw, "quantization_config": {"quant_method": "awq", "w_bit": 4, "q_group_size": 128,
                                                           "version": "GEMM"}})  # AutoAWQ's own key names
    assert stored_weights(autoawq).total == stored_weights(awq).total
    eight = parse_config({**raw, "quantization_config": {"quant_method": "gptq", "bits": 8, "group_size": -1}})
    want = sum(4 * (i // 4 * o + o // 4 + i) + 2 * o for o, i in shapes)  # one group per row: in = g
    assert stored_weights(eight).total == want + plain
    for q in [{"quant_method": "awq", "bits": 3}, {"quant_method": "awq", "version": "gemv"},
              {"quant_method": "gptq", "bits": 4, "group_size": 0}]:
        with pytest.raises(ConfigError, match=r"quantization_config\.(bits|version|group_size)"):
            stored_weights(parse_config({**raw, "quantization_config": q}))
    odd = parse_config({**raw, "intermediate_size": 500, "quantization_config": {"quant_method": "gptq", "bits": 4}})
    with pytest.raises(ConfigError, match="gate_proj is 500 × 256"):  # no 32-wide packing: refused, not rounded
        stored_weights(odd)
    # about 4 + (16 + 4)/128 bits a weight, g_idx aside (REFERENCE.md: ≈ 4.16 at g = 128)
    assert stored_weights(awq).by_dtype["int32"] + stored_weights(awq).by_dtype["fp16"] - plain == sum(
        o * i for o, i in shapes) * (4 + 20 / 128) / 8


def test_unknown_method_one_line_and_memory_still_answers(tmp_path, capsys):
    raw = {k: v for k, v in raw_config("qwen3-8b").items() if not k.startswith("_")}
    raw["quantization_config"] = {"quant_method": "hqq", "nbits": 4}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(ConfigError, match="quant_method"):
        stored_weights(parse_config(raw))
    assert main(["memory", str(path), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["stored_weight_bytes"] is None and "hqq" in document["stored_weight_bytes_refused"]
    assert document["parameters"] == 8_190_735_360
    assert main(["memory", str(path)]) == 0
    text = capsys.readouterr().out
    assert sum("hqq" in line for line in text.splitlines()) == 1


def test_memory_json_and_text_carry_the_stored_bytes(capsys):
    assert main(["memory", "qwen3-8b-fp8", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["stored_weight_bytes"] == 9_436_551_168
    assert document["stored_weight_bytes_by_dtype"] == stored_weights(load_config("qwen3-8b-fp8")).by_dtype
    assert main(["memory", "qwen3-8b"]) == 0
    assert "stored" not in capsys.readouterr().out
    assert main(["memory", "gpt-oss-120b"]) == 0
    assert "65,248,815,744" in capsys.readouterr().out


JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 300) | st.floats(allow_nan=False) | st.text(max_size=4),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
                    max_leaves=4)
KEYS = ["weight_block_size", "activation_scheme", "modules_to_not_convert", "llm_int8_skip_modules", "load_in_4bit",
        "load_in_8bit", "bnb_4bit_quant_type", "bnb_4bit_use_double_quant", "bits", "group_size", "version", "w_bit"]


@settings(max_examples=15, deadline=None, derandomize=True, database=None)
@given(method=st.sampled_from(["fp8", "mxfp4", "bitsandbytes", "gptq", "awq", "squeeze", None, 4]),
       fields=st.dictionaries(st.sampled_from(KEYS), JSON, max_size=4), dtype=st.sampled_from([None, "bfloat16", "int3"]))
def test_any_quantization_config_is_answered_or_refused_in_one_line(method, fields, dtype):
    config = replace(load_config("mixtral-8x7b-v0.1"), quantization={"quant_method": method, **fields}, torch_dtype=dtype)
    try:
        stored = stored_weights(config)
    except ConfigError as error:
        assert "\n" not in str(error) and str(error).startswith("quantization_config") or error.field == "torch_dtype"
    else:
        assert stored.total > 0 and all(n >= 0 for n in stored.by_dtype.values())


def test_memory_totals_serving_the_checkpoint_as_stored():
    """``memory`` of a pre-quantized checkpoint adds what serving it as published holds: its stored bytes + the KV
    cache (beside the fp16 figure); a config without a quantization_config has no such line."""
    from helpers.memory import Memory, memory_report, memory_json
    oss = Memory(load_config("gpt-oss-120b"), 1, 8192, "fp16")
    assert oss.inference_stored() == 65_248_815_744 + oss.kv_cache() == memory_json(oss)["inference_stored"]
    assert "inference (the checkpoint's stored weights + KV cache)" in memory_report(oss)
    plain = Memory(load_config("llama-7b"), 1, 2048, "fp16")
    assert plain.inference_stored() is None and "inference_stored" not in memory_json(plain)
