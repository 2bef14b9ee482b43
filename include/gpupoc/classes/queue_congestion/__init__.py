"""Queue congestion: can the platform explain every wait (order, bottleneck, expected wait, priority)?"""
