"""Tandem tensor engine: sampling and PPO/GRPO updates for HF causal LMs over JSON lines."""
