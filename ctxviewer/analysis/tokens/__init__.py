"""Counting tokens: the local estimators (BPE and heuristics), their calibration, the counter protocol, and the API's count_tokens."""
