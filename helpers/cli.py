"""``python -m helpers``: count a model's parameters from its ``config.json``.

Introduced in ``00_overview``. It never imports torch, so it answers in a fraction of a second.

    python -m helpers count bert-base-uncased
    python -m helpers count path/to/config.json --json

A config that cannot be counted gets one line on stderr naming the field, and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from .config import ConfigError, ModelConfig, load_config, model_names
from .count import breakdown, count_model, describe, tensor_table, to_json

EXIT_BAD_INPUT = 2


def _count(config: ModelConfig, args: argparse.Namespace) -> str:
    result = count_model(config)
    if args.json:
        return json.dumps(to_json(result))
    text = f"{describe(config)}\n\n{breakdown(result)}"
    if args.tensors:
        text += "\n\n" + tensor_table(result.params)
    return text


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m helpers",
        description="Exact parameter counts for Transformer configs (Hugging Face config.json).",
        epilog=f"Shipped models (data/models/): {', '.join(model_names())}",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    count = commands.add_parser("count", help="every parameter tensor, by component")
    count.add_argument("config", metavar="CONFIG", help="a config.json path or a model name in data/models/")
    count.add_argument("--json", action="store_true", help="print a JSON document instead of a table")
    count.add_argument("--tensors", action="store_true", help="also list every tensor (text output only)")
    count.set_defaults(run=_count)
    return parser




def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        config = load_config(args.config)
        output = args.run(config, args)
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(output)
    return 0
