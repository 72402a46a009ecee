"""The local demo: the whole order system on one machine, on real TPC-H orders, with faults."""
