"""Castle Rooms: a 2-4 player card game of matching Room connectors (PettingZoo AEC)."""
