"""The modules only notebooks use (layer 4): what a lesson computes to make its point, beside the engine.

Introduced in ``01_embeddings`` (:mod:`helpers.lessons.embeddings`). Each is imported by its notebooks (and their
tests), never by the engine, the analyses or the command line (``tests/test_layers.py``):

* ``embeddings`` (01), ``attention`` (02), ``scaling`` (05, 06), ``estimates`` (07: the 12·L·H² estimate and its error);
* ``checkpoint`` (06, 09: a real checkpoint's tensors against the engine's table);
* ``vaswani`` (the 2017 Transformer), ``conventions`` (the conventions behind published figures), ``moe`` (one
  mixture-of-experts layer and the grouped_mm trap), ``design`` (the design choices of the families): 09, 11;
* ``fsdp_check`` (10: a real FSDP2 run on two CPU processes);
* ``errata`` and ``checkpoint_files`` (the Chinese-only notebooks ``zh/errata`` and ``zh/chinese_checkpoints``).
"""
