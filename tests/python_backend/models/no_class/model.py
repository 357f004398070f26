class SomethingElse:
    pass
