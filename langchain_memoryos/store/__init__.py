"""The store layer: namespaces in a LangGraph ``BaseStore``, per-user state and caches, locks, the unit of work."""
