"""The effect kernel, the package's bottom layer of the engine: steps, their effects and drivers, judgements.

A step is a generator that yields effects (:mod:`.effects`: a store batch,
texts to embed, a lock, a typed judgement request of :mod:`.judgements`) and
receives their results; :func:`~.effects.run_sync` and :func:`~.effects.run_async`
perform them with the services they are given. The controller protocol and its
answers (:mod:`.controller`) are here too, so that the kernel names no
implementation: the store, the controllers, the tiers and AMU all build on it.
"""
