"""``finetune``: LoRA's trainable parameters equal to what peft's ``get_peft_model`` leaves trainable,
QLoRA's NF4 bytes equal to what bitsandbytes' ``quantize_4bit`` holds, and the command line.

The oracle for LoRA is peft on transformers' own model built on the meta device (``tests/conftest.py`` ``hf_model``),
over every family the engine knows (one tiny config each, and random small ones), several ranks and target lists:
``all-linear`` and comma lists of module-name suffixes drawn from the model's own names (linear layers, embeddings,
and modules peft refuses: norms, routers, fused experts, blocks of layers; the engine must refuse those too).
"""

from __future__ import annotations

import json
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import parse_config
from helpers.cli import main
from helpers.config import ConfigError, load_config
from helpers.finetune import ALL_LINEAR, WRAPPED, Finetune, lora_parameters, modules, nf4_bytes

from .conftest import hf_model
from .strategies import STRATEGIES, TINY

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
peft = pytest.importorskip("peft")
transformers.logging.set_verbosity_error()

RANDOM = settings(max_examples=4, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def peft_trainable(raw: dict, rank: int, targets: str) -> int | None:
    """What peft leaves trainable on transformers' model (meta device), or None where peft raises."""
    model = hf_model(raw)
    target = ALL_LINEAR if targets == ALL_LINEAR else [t for t in targets.split(",")]
    config = peft.LoraConfig(r=rank, lora_alpha=2 * rank, target_modules=target, lora_dropout=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            wrapped = peft.get_peft_model(model, config)
        except (ValueError, TypeError, NotImplementedError):
            return None
    return sum(p.numel() for p in wrapped.parameters() if p.requires_grad)


def engine_trainable(raw: dict, rank: int, targets: str) -> int | None:
    try:
        return lora_parameters(parse_config(raw), rank, targets)
    except ConfigError:
        return None


def names(raw: dict) -> tuple[list[str], list[str]]:
    """The model's module-name suffixes: of its linear layers and embeddings, and of the rest (refused by peft)."""
    table = modules(parse_config(raw))
    wrap = sorted({m.name.rpartition(".")[2] for m in table.values() if m.kind in WRAPPED})
    other = sorted({m.name.rpartition(".")[2] for m in table.values() if m.kind not in WRAPPED} - set(wrap))
    return wrap, other


@st.composite
def target_lists(draw, raw: dict) -> str:
    wrap, other = names(raw)
    if not wrap or draw(st.integers(0, 2)) == 0:
        return ALL_LINEAR
    chosen = draw(st.lists(st.sampled_from(wrap), min_size=1, max_size=3, unique=True))
    if other and draw(st.integers(0, 4)) == 0:
        chosen.append(draw(st.sampled_from(other)))  # a norm, a router, the experts: peft raises
    return ",".join(chosen)


@pytest.mark.parametrize("model_type", sorted(TINY))
@pytest.mark.parametrize("rank", [1, 8])
def test_all_linear_equals_peft(model_type, rank):
    raw = TINY[model_type]
    assert engine_trainable(raw, rank, ALL_LINEAR) == peft_trainable(raw, rank, ALL_LINEAR)


@pytest.mark.parametrize("model_type", sorted(TINY))
def test_each_module_name_equals_peft(model_type):
    """Every module-name suffix of the model on its own: the same count as peft, or refused where peft raises."""
    raw = TINY[model_type]
    wrap, other = names(raw)
    for suffix in [*wrap, *other, "self_attn", "layers", "lm_head"]:
        expected = peft_trainable(raw, 4, suffix)
        assert engine_trainable(raw, 4, suffix) == expected, suffix


@pytest.mark.parametrize("model_type", sorted(STRATEGIES))
def test_random_configs_equal_peft(model_type):
    @RANDOM
    @given(data=st.data())
    def check(data):
        raw = data.draw(STRATEGIES[model_type])
        rank = data.draw(st.sampled_from([1, 2, 16]))
        targets = data.draw(target_lists(raw))
        assert engine_trainable(raw, rank, targets) == peft_trainable(raw, rank, targets), targets

    check()


def test_published_figures():
    """The figures peft prints for the usual recipes: GPT-2's c_attn at r = 8, LLaMA-7B all-linear at r = 16."""
    assert lora_parameters(load_config("gpt2"), 8, "c_attn") == 294_912
    assert lora_parameters(load_config("llama-7b"), 16, ALL_LINEAR) == 39_976_960
    assert lora_parameters(load_config("llama-7b"), 8, "q_proj,v_proj") == 4_194_304
    assert lora_parameters(load_config("bert-base-uncased"), 8, "query,value") == 294_912


# --- QLoRA: NF4 with double quantization, as bitsandbytes holds it ----------------------------------------------------

def held_bytes(tensor, blocksize: int = 64) -> int:
    """The bytes of the tensors ``quantize_4bit`` returns and its QuantState holds, each storage once."""
    bnb = pytest.importorskip("bitsandbytes.functional")
    packed, state = bnb.quantize_4bit(tensor, blocksize=blocksize, quant_type="nf4", compress_statistics=True)
    held = [packed, state.absmax, state.code, state.offset, state.state2.absmax, state.state2.code]
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in held}
    return sum(storages.values())


@pytest.mark.parametrize("shape", [(16, 12), (20, 16), (1, 1), (3, 5), (64, 64), (100, 77), (256, 65), (300, 257)])
def test_nf4_bytes_exact(shape):
    tensor = torch.randn(*shape, dtype=torch.bfloat16)
    assert nf4_bytes(tensor.numel()) == held_bytes(tensor)
    for blocksize in (128, 256):  # quantize_4bit's other block sizes (exercise 12.2)
        assert nf4_bytes(tensor.numel(), blocksize=blocksize) == held_bytes(tensor, blocksize)


def test_qlora_frozen_bytes_per_linear_layer():
    """A tiny LLaMA's QLoRA frozen weights: bitsandbytes' bytes for each linear weight, bf16 for the rest."""
    raw = TINY["llama"]
    config = parse_config(raw)
    model = hf_model(raw, "cpu")
    head = model.get_output_embeddings()
    linear = [m.weight for m in model.modules() if isinstance(m, torch.nn.Linear) and m is not head]
    quantized = sum(held_bytes(w.detach().to(torch.bfloat16)) for w in linear)
    rest = sum(p.numel() for p in model.parameters()) - sum(w.numel() for w in linear)
    run = Finetune(config, "qlora", 8, ALL_LINEAR, 1, 8, "adamw", "none", "bf16")
    assert run.frozen_weight_bytes == quantized + 2 * rest


# --- the optimizer's state, as torch holds it ------------------------------------------------------------------------

def stepped(raw: dict, rank: int, optimizer: str):
    """peft's adapters (all-linear, ``rank``) on a tiny real GPT-2 after one step of ``optimizer``: the trainable
    tensors, and the bytes of the state the optimizer holds, each storage once."""
    torch.manual_seed(0)
    model = peft.get_peft_model(hf_model(raw, "cpu"), peft.LoraConfig(r=rank, target_modules=ALL_LINEAR))
    trainable = [p for p in model.parameters() if p.requires_grad]
    make = torch.optim.AdamW if optimizer == "adamw" else pytest.importorskip("bitsandbytes").optim.AdamW8bit
    step = make(trainable)
    model(torch.tensor([[1, 2, 3]])).logits.sum().backward()
    step.step()
    held = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes()
            for s in step.state.values() for t in s.values() if torch.is_tensor(t)}
    return trainable, sum(held.values())


@pytest.mark.parametrize("optimizer, width, rank", [("adamw", 12, 4), ("adamw8bit", 64, 40)])
def test_optimizer_state_equals_the_optimizers(optimizer, width, rank):
    """torch's AdamW (two fp32 moments and an fp32 step per tensor) and bitsandbytes' AdamW8bit (GPT-2, H = 64,
    r = 40: adapters either side of its 4096-value threshold) after one step: the bytes they hold; the adapters' too."""
    raw = {**TINY["gpt2"], "n_embd": width, "n_head": 4}
    trainable, held = stepped(raw, rank, optimizer)
    run = Finetune(parse_config(raw), "lora", rank, ALL_LINEAR, 1, 3, optimizer, "none", "bf16")
    assert run.optimizer_bytes == held
    assert run.adapter_bytes == sum(p.nbytes for p in trainable) == run.gradient_bytes
    if optimizer == "adamw8bit":
        assert {p.numel() < 4096 for p in trainable} == {True, False}

# --- the command line ---------------------------------------------------------------------------------------------------

KEYS = {"trainable_parameters", "frozen_weight_bytes", "adapter_bytes", "gradient_bytes", "optimizer_bytes",
        "activation_bytes", "total_bytes"}


def test_cli_json(capsys):
    assert main(["finetune", "llama-7b", "--method", "qlora", "--rank", "16", "--seq-len", "512", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert KEYS <= set(doc) and doc["trainable_parameters"] == 39_976_960
    parts = ("frozen_weight_bytes", "adapter_bytes", "trained_weight_bytes", "gradient_bytes", "optimizer_bytes",
             "activation_bytes")
    assert doc["total_bytes"] == sum(doc[k] for k in parts)


def test_full_trains_everything(capsys):
    assert main(["finetune", "gpt2", "--method", "full", "--optimizer", "sgd", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["trainable_parameters"] == 124_439_808 and doc["frozen_weight_bytes"] == 0
    assert doc["gradient_bytes"] == doc["trained_weight_bytes"] == 2 * 124_439_808
    assert doc["optimizer_bytes"] == 4 * 124_439_808  # SGD keeps no state; the fp32 master weights


def test_cli_text_shows_formulas(capsys):
    assert main(["finetune", "gpt2", "--targets", "c_attn", "--optimizer", "adamw8bit", "--checkpointing", "full"]) == 0
    out = capsys.readouterr().out
    assert "294,912" in out and "r·Σ(d_in + d_out)" in out and "AdamW8bit" in out and "2·S·B·H" in out


@pytest.mark.parametrize("argv, field", [
    (["--targets", "ln_1"], "--targets"), (["--targets", "nothing"], "--targets"), (["--targets", "h"], "--targets"),
    (["--method", "dora"], "--method"), (["--rank", "0"], "--rank"), (["--optimizer", "lion"], "--optimizer"),
    (["--checkpointing", "selective"], "--checkpointing"), (["--weight-dtype", "fp8"], "--weight-dtype"),
])
def test_cli_refuses_in_one_line(capsys, argv, field):
    assert main(["finetune", "gpt2", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {field}:") and err.count("\n") == 1


@pytest.mark.parametrize("model_type, targets", [
    ("mixtral", "w1"), ("mixtral", "w1,w3"), ("mixtral", "w2,q_proj"), ("mixtral", "gate"), ("mixtral", "experts"),
    ("qwen3_moe", "gate_proj"), ("qwen3_moe", "gate_proj,up_proj"), ("qwen3_moe", "down_proj"),
    ("deepseek_v3", "mlp.gate"), ("deepseek_v3", "up_proj,gate_proj,o_proj"), ("qwen3_next", "shared_expert_gate"),
    ("gpt_oss", "router"), ("gpt_oss", "experts"),
])
def test_mixtures_as_peft_bridges_them(model_type, targets):
    """transformers 5 fuses the experts into 3-D parameters; peft maps the transformers-4 names onto them (the router's
    ``gate``, Mixtral's w1/w2/w3, ``gate_proj``/``up_proj``/``down_proj``), the fused halves together or not at all;
    GPT-OSS is no part of that bridge (its router and experts refused)."""
    raw = TINY[model_type]
    assert engine_trainable(raw, 2, targets) == peft_trainable(raw, 2, targets)


# --- activations: what autograd saves for backward, against Korthikanti et al. 2022 ---------------------------------

def saved_bytes(model, ids, checkpointing: bool) -> int:
    """The bytes of the tensors autograd saves in one training-mode forward pass, each storage once, the parameters
    left out (``torch.autograd.graph.saved_tensors_hooks``)."""
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen: dict[int, int] = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in params and storage.data_ptr() != 0:
            seen[storage.data_ptr()] = storage.nbytes()
        return tensor

    if checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        model(ids)
    return sum(seen.values())


def saved_per_layer(raw: dict, depth: str, batch: int, seq_len: int, checkpointing: bool) -> int:
    """One layer's saved bytes: a bf16 model of two layers less the same model of one."""
    sizes = []
    for layers in (1, 2):
        torch.manual_seed(0)
        model = hf_model({**raw, depth: layers}, "cpu").to(torch.bfloat16).train()
        sizes.append(saved_bytes(model, torch.randint(0, 40, (batch, seq_len)), checkpointing))
    return sizes[1] - sizes[0]


@pytest.mark.parametrize("model_type", ["gpt2", "llama", "qwen3", "mixtral", "phi3", "gemma2", "bert"])
def test_full_checkpointing_saves_the_layer_input(model_type):
    """Full checkpointing: each layer keeps its input only, 2·S·B·H bytes in bf16 (Korthikanti et al., §5), exact."""
    raw = TINY[model_type]
    depth = "n_layer" if model_type == "gpt2" else "num_hidden_layers"
    run = Finetune(parse_config(raw), "lora", 8, ALL_LINEAR, 2, 8, "adamw", "full", "bf16")
    assert saved_per_layer(raw, depth, 2, 8, True) * parse_config(raw)["L"] == run.activation_bytes


@pytest.mark.parametrize("H, A, S, B", [(64, 4, 32, 2), (128, 8, 64, 1), (256, 4, 128, 2)])
def test_no_checkpointing_is_an_estimate(H, A, S, B):
    """Without checkpointing, eq. 1 (34·S·B·H + 5·A·S²·B a layer) on GPT-2 (exact GELU, dropout on), the model it was
    written for: autograd saves 9 to 19% more (torch's matmul copies the head-split Q and K, 4·S·B·H; LayerNorm keeps
    fp32 statistics). The error the report states."""
    raw = {"model_type": "gpt2", "vocab_size": 40, "n_embd": H, "n_head": A, "n_positions": S, "n_layer": 1,
           "activation_function": "gelu"}
    estimate = Finetune(parse_config(raw), "lora", 8, ALL_LINEAR, B, S, "adamw", "none", "bf16").activation_bytes
    assert 1.05 < saved_per_layer(raw, "n_layer", B, S, False) / estimate < 1.2
