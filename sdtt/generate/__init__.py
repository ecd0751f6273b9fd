"""Topics and self-directed pseudo-dialogue (method.md, "Algorithm 1").

- :mod:`sdtt.generate.topics`: ask a model for distinct everyday topics, read topic files;
- :mod:`sdtt.generate.prompts`: the generator's own prompts;
- :mod:`sdtt.generate.chain`: a chain's settings and the records of its file;
- :mod:`sdtt.generate.pseudo`: the pure core of Algorithm 1 (chain state, steps);
- :mod:`sdtt.generate.chainfile`: reading chain files back (resume, ``--pseudo``);
- :mod:`sdtt.generate.runner`: chains run concurrently on trio, with resume;
- :mod:`sdtt.generate.chain_spec`: a grid or plan file of chains;
- :mod:`sdtt.generate.batch_api`: chains run through the providers' batch APIs;
- :mod:`sdtt.generate.pricing`: cost estimates from the providers' price tables;
- :mod:`sdtt.generate.progress`: what progress displays say about chains, as plain text.
"""
