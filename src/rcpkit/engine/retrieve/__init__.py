"""The retrieve pipeline (§7): recall, fusion, stages, packing, confidence, trust, cursors."""
