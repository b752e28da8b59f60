"""The application: what a command computes, as plain data (a Result), whatever the front end.
"""
