"""The SQL models of `stats` (one model a file), installed as package data of `pipeline.sql`."""
