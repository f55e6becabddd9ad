"""Compaction simulation (docs/compaction.md): strategies, summarizers, results.

May import ``ctxviewer.model``, ``ctxviewer.analysis`` and ``anthropic``
(only in ``summarize_anthropic``, which the rest never imports). Never Qt.
"""

from __future__ import annotations

from ctxviewer.analysis.compaction.base import CompactionResult, SlimmedBlock, Summarizer, Summary
from ctxviewer.analysis.compaction.slim import SlimParams, compress_code_block, compress_tool_output
from ctxviewer.analysis.compaction.strategies import (
    LABELS,
    STRATEGIES,
    Params,
    default_params,
    simulate_compaction,
)
from ctxviewer.analysis.compaction.summarize_local import LocalSummarizer
from ctxviewer.analysis.compaction.summary import QwenParams, ShannonParams, split_point
from ctxviewer.analysis.compaction.trim import TrimParams

__all__ = [
    "LABELS",
    "STRATEGIES",
    "CompactionResult",
    "LocalSummarizer",
    "Params",
    "QwenParams",
    "ShannonParams",
    "SlimParams",
    "SlimmedBlock",
    "Summarizer",
    "Summary",
    "TrimParams",
    "compress_code_block",
    "compress_tool_output",
    "default_params",
    "simulate_compaction",
    "split_point",
]
