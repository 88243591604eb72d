"""TasteBench Warehouse: loaders, simulator and library code that the dbt models call."""

__version__ = "0.1.0"
