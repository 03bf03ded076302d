"""`lancelot --http` and the Lambda handler's HTTP layer: serving, connections, the guard, requests in flight.

A stdio server never imports this package.
"""
