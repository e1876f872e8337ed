from ninja import Router

router = Router(tags=["memory"])
