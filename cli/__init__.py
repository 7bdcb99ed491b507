"""rummyguard.cli"""
