"""rummyguard.sim"""
