"""rummyguard.fraud"""
