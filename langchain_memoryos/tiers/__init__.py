"""The MemoryOS tiers: STM (a thread's FIFO of pages), MTM (topic segments with heat), LPM (promotion)."""
