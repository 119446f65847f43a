"""BERT, RoBERTa (and XLM-RoBERTa) and ELECTRA as plain torch modules: the encoders of notebooks 00–06."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from ..config import ModelConfig
from .blocks import _run, _self_attention

__all__ = ["BertEmbeddings", "RobertaEmbeddings", "BertSelfAttention", "BertSelfOutput", "BertAttention",
           "BertIntermediate", "BertOutput", "BertLayer", "BertEncoder", "BertPooler", "BertModel", "RobertaModel",
           "BertPredictionHeadTransform", "BertLMPredictionHead", "BertPreTrainingHeads", "BertForPreTraining",
           "ElectraEmbeddings", "ElectraModel"]


class BertEmbeddings(nn.Module):
    """Token (V×H) + position (P×H) + segment (T×H) tables, summed, then LayerNorm.

    ``width`` names the tables' width in the config (ELECTRA's and ALBERT's d_e); without ``segments`` there is no
    segment table (DistilBERT's).
    Introduced in ``01_embeddings``.
    """

    width, segments = "H", True

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        W = c[self.width]
        self.word_embeddings = nn.Embedding(c["V"], W)
        self.position_embeddings = nn.Embedding(c["P"], W)
        if self.segments:
            self.token_type_embeddings = nn.Embedding(c["T"], W)
        self.LayerNorm = nn.LayerNorm(W)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.word_embeddings(input_ids) + self.position_embeddings(positions)
        if self.segments:
            x = x + self.token_type_embeddings(torch.zeros_like(input_ids))
        return self.LayerNorm(x)


class RobertaEmbeddings(BertEmbeddings):
    """RoBERTa's embeddings: the same tables, the position table registered last (as transformers does).
    Introduced in ``01_embeddings``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__(c)
        self.position_embeddings = self._modules.pop("position_embeddings")  # registered again: now last


class BertSelfAttention(nn.Module):
    """Q, K, V projections (H×H each, with bias) and the split into A heads of d_k.
    Introduced in ``02_multi_head_attention``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.heads = c["A"]
        self.query = nn.Linear(c["H"], c["H"])
        self.key = nn.Linear(c["H"], c["H"])
        self.value = nn.Linear(c["H"], c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _self_attention(x, self.heads, (self.query, self.key, self.value), causal=False)


class BertSelfOutput(nn.Module):
    """Output projection W_O (H×H) and the post-attention LayerNorm.
    No notebook calls it; it works behind the helpers of ``02_multi_head_attention``."""

    n_in = "H"

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(c[self.n_in], c["H"])
        self.LayerNorm = nn.LayerNorm(c["H"])

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.dense(x) + residual)


class BertAttention(nn.Module):
    """Multi-head self-attention with its output projection and LayerNorm: 4H² + 4H + 2H.
    Introduced in ``02_multi_head_attention``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = BertSelfOutput(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.output(self.self(x), x)


class BertIntermediate(nn.Module):
    """First feed-forward matrix, H -> I, then GELU.
    Introduced in ``03_feed_forward``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(c["H"], c["I"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.dense(x))


class BertOutput(BertSelfOutput):
    """Second feed-forward matrix, I -> H, and the layer's second LayerNorm.
    Introduced in ``03_feed_forward``."""

    n_in = "I"


class BertLayer(nn.Module):
    """One encoder layer: attention block, then feed-forward block.
    Introduced in ``03_feed_forward``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.attention = BertAttention(c)
        self.intermediate = BertIntermediate(c)
        self.output = BertOutput(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.attention(x)
        return self.output(self.intermediate(x), x)


class BertEncoder(nn.Module):
    """The L encoder layers, ``encoder.layer.0`` ...: L·(4H² + 2H·I + I + 9H).
    No notebook calls it; it works behind the helpers of ``05_pooler_and_heads``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(c) for _ in range(c["L"]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _run(self.layer, x)


class BertPooler(nn.Module):
    """Dense H×H + tanh on the [CLS] position only.
    Introduced in ``05_pooler_and_heads``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(c["H"], c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.dense(x[:, 0]))


class BertModel(nn.Module):
    """Embeddings, L encoder layers, pooler: ``BertModel``.
    No notebook calls it; it works behind the helpers of ``05_pooler_and_heads``."""

    embeddings_class: type[BertEmbeddings] = BertEmbeddings

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.embeddings = self.embeddings_class(c)
        self.encoder = BertEncoder(c)
        self.pooler = BertPooler(c)

    def forward(self, input_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = self.encoder(self.embeddings(input_ids))
        return hidden, self.pooler(hidden)


class RobertaModel(BertModel):
    """``RobertaModel``: BERT's model with RoBERTa's embeddings (the position table registered last).
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    embeddings_class = RobertaEmbeddings


class BertPredictionHeadTransform(nn.Module):
    """MLM head transform (parameters only): dense H² + H and LayerNorm 2H: H² + 3H.
    No notebook calls it; it works behind the helpers of ``05_pooler_and_heads``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(c["H"], c["H"])
        self.LayerNorm = nn.LayerNorm(c["H"])


class BertLMPredictionHead(nn.Module):
    """MLM head: transform (H² + H), LayerNorm (2H), decoder tied to the word embeddings, bias (V).
    No notebook calls it; it works behind the helpers of ``05_pooler_and_heads``."""

    def __init__(self, c: ModelConfig, word_embeddings: nn.Embedding) -> None:
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(c["V"]))
        self.transform = BertPredictionHeadTransform(c)
        self.decoder = nn.Linear(c["H"], c["V"], bias=False)
        self.decoder.weight = word_embeddings.weight  # tied: one tensor, counted once


class BertPreTrainingHeads(nn.Module):
    """The ``cls.`` heads: MLM (V + H² + 3H, decoder tied) and NSP (2H + 2): V + H² + 5H + 2.
    No notebook calls it; it works behind the helpers of ``05_pooler_and_heads``."""

    def __init__(self, c: ModelConfig, word_embeddings: nn.Embedding) -> None:
        super().__init__()
        self.predictions = BertLMPredictionHead(c, word_embeddings)
        self.seq_relationship = nn.Linear(c["H"], 2)


class BertForPreTraining(nn.Module):
    """``BertForPreTraining``: the model under ``bert.``, the MLM and NSP heads under ``cls.``.
    Introduced in ``05_pooler_and_heads``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.bert = BertModel(c)
        self.cls = BertPreTrainingHeads(c, self.bert.embeddings.word_embeddings)


class ElectraEmbeddings(BertEmbeddings):
    """BERT's three tables and LayerNorm, d_e (``embedding_size``) wide: ELECTRA's and ALBERT's embeddings.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    width = "d_e"


class ElectraModel(nn.Module):
    """``ElectraModel``: d_e-wide embeddings, a projection d_e → H where d_e ≠ H, BERT's L layers, no pooler.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.embeddings = ElectraEmbeddings(c)
        if c["d_e"] != c["H"]:
            self.embeddings_project = nn.Linear(c["d_e"], c["H"])
        self.encoder = BertEncoder(c)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        x = self.embeddings(input_ids)
        if hasattr(self, "embeddings_project"):
            x = self.embeddings_project(x)
        return self.encoder(x)
