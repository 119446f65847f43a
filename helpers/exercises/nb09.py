"""Exercises of ``09_modern_architectures``: expected answers computed by the engine, looked up by id."""

from __future__ import annotations

from . import Case, Exercise, register
from ..config import load_config, parse_config, raw_config
from ..count import count_model

# 09.1: Mixtral 8x7B's experts cut into narrower ones (fine-grained experts, as DeepSeekMoE: Dai et al. 2024)
FINE_GRAINED = {"num_local_experts": 64, "intermediate_size": 14336 // 8, "num_experts_per_tok": 16}
# 09.4: DeepSeek-V3 with DeepSeek-V2-Lite's queries: no low-rank bottleneck, one plain q_proj
PLAIN_QUERY = {"q_lora_rank": None}


def _fine_grained_change() -> int:
    """09.1: the change of the total when each of Mixtral 8x7B's 8 experts is split into 8 of an eighth the width."""
    mixtral = load_config("mixtral-8x7b-v0.1")
    fine = parse_config({**raw_config("mixtral-8x7b-v0.1"), **FINE_GRAINED}, name="Mixtral, 64 fine-grained experts")
    return count_model(fine).total - count_model(mixtral).total


def _plain_query_change() -> int:
    """09.4: the change of DeepSeek-V3's total when its queries lose their bottleneck (``q_lora_rank: null``)."""
    plain = parse_config({**raw_config("deepseek-v3"), **PLAIN_QUERY}, name="DeepSeek-V3, plain q_proj")
    return count_model(plain).total - count_model(load_config("deepseek-v3")).total


def _moe_active(V: int, H: int, L: int, A: int, A_kv: int, d_k: int, E: int, k: int, I_e: int, qk_norm: bool,
                tied: bool) -> int:
    """Reference solution of 09.3: the parameters one token uses in a decoder whose every layer is a mixture."""
    attention = 2 * A * d_k * H + 2 * A_kv * d_k * H + (2 * d_k if qk_norm else 0)
    mixture = E * H + k * 3 * H * I_e  # the router, then the k experts the token is routed to
    return V * H + L * (attention + mixture + 2 * H) + H + (0 if tied else V * H)


def _moe_cases() -> list[Case]:
    mixtral, qwen = raw_config("mixtral-8x7b-v0.1"), raw_config("qwen3-30b-a3b")
    configs = [
        ("Mixtral 8x7B", mixtral),
        ("Qwen3-30B-A3B", qwen),
        ("Mixtral 8x7B with one expert per token", {**mixtral, "num_experts_per_tok": 1}),
        ("a Qwen3-MoE of 64 experts, 4 per token, head tied",
         {**qwen, "num_experts": 64, "num_experts_per_tok": 4, "num_hidden_layers": 24, "tie_word_embeddings": True}),
    ]
    cases = []
    for label, raw in configs:
        c = parse_config(raw, name=label)
        qwen3 = c.model_type == "qwen3_moe"
        kwargs = {"V": c["V"], "H": c["H"], "L": c["L"], "A": c["A"], "A_kv": c["A_kv"], "d_k": c["d_k"], "E": c["E"],
                  "k": c["k"], "I_e": c["I_e"] if qwen3 else c["I"], "qk_norm": qwen3,
                  "tied": c.flags["tie_word_embeddings"]}
        cases.append(Case(kwargs, count_model(c).active, label))
    return cases


register(
    Exercise("09.1", "predict", answer=_fine_grained_change, tolerance=0.1),
    Exercise("09.2", "explain", answer=lambda: "b", choices=("a", "b", "c", "d"),
             hint="count one layer's feed-forward in each file (how many matrices, how wide), then look for a tensor "
                  "one checkpoint stores and the other does not"),
    Exercise("09.3", "code", cases=_moe_cases, solution=_moe_active),
    Exercise("09.4", "predict", answer=_plain_query_change, tolerance=0.1),
    Exercise("09.5", "explain", answer=lambda: "b", choices=("a", "b", "c", "d"),
             hint="write the score of a query and a key with the up-projection inside it: where does the rotation sit?"),
)
