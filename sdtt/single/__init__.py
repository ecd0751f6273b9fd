"""Single-item Turing-like tests: a judge sees one item and says human or machine."""
