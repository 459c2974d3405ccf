"""What a pass costs and what fits: the cost unit and its ticks, KV capacity, the roofline."""
