"""Offline tooling: run a stack's program under Pulumi's mock engine and report on it."""
