"""Judge alignment by pairwise similarity ratings and representational similarity analysis.

After Ogg et al. ("A Flexible Method for Behaviorally Measuring Alignment Between Human
and Artificial Intelligence Using Representational Similarity Analysis"): judges rate how
similar two chat items are; each judge's ratings form a dissimilarity matrix, and
matrices are compared between people, between models and across the two.
"""
