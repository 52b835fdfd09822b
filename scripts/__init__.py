"""Scripts: the benchmarks, the fidelity report, the pin check and the packaging check."""
