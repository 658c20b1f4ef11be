"""HTTP endpoints of the Conversations API."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from responsa.engine import ConversationService
from responsa.protocol import (
    CreateConversationItemsRequest,
    CreateConversationRequest,
    DeletedObject,
    UpdateConversationRequest,
)

from ._errors import json_response
from ._parsing import item_list_body, page_body, paging, read_model
from ._services import services, tenant_of

__all__ = ["conversation_routes"]


def _conversations(request: Request) -> ConversationService:
    service = services(request).conversations
    return service.for_tenant(tenant_of(request))


def _id(request: Request) -> str:
    return str(request.path_params["conversation_id"])


async def create_conversation(request: Request) -> Response:
    conversation = await _conversations(request).create(await read_model(request, CreateConversationRequest))
    return json_response(conversation.model_dump(mode="json"))


async def get_conversation(request: Request) -> Response:
    return json_response((await _conversations(request).get(_id(request))).model_dump(mode="json"))


async def update_conversation(request: Request) -> Response:
    update = await read_model(request, UpdateConversationRequest)
    return json_response((await _conversations(request).update(_id(request), update)).model_dump(mode="json"))


async def delete_conversation(request: Request) -> Response:
    await _conversations(request).delete(_id(request))
    return json_response(DeletedObject(id=_id(request), object="conversation.deleted").model_dump(mode="json"))


async def create_items(request: Request) -> Response:
    body = await read_model(request, CreateConversationItemsRequest)
    return json_response(item_list_body(await _conversations(request).add_items(_id(request), body)))


async def list_items(request: Request) -> Response:
    page = paging(request, default_limit=100)
    found = await _conversations(request).list_items(
        _id(request), limit=page.limit, order=page.order, after=page.after, before=page.before
    )
    return json_response(page_body(found))


async def get_item(request: Request) -> Response:
    item = await _conversations(request).get_item(_id(request), request.path_params["item_id"])
    return json_response(item.model_dump(mode="json"))


async def delete_item(request: Request) -> Response:
    conversation = await _conversations(request).delete_item(_id(request), request.path_params["item_id"])
    return json_response(conversation.model_dump(mode="json"))


def conversation_routes(prefix: str) -> list[BaseRoute]:
    base = f"{prefix}/conversations"
    one = f"{base}/{{conversation_id}}"
    return [
        Route(base, create_conversation, methods=["POST"]),
        Route(one, get_conversation, methods=["GET"]),
        Route(one, update_conversation, methods=["POST"]),
        Route(one, delete_conversation, methods=["DELETE"]),
        Route(f"{one}/items", create_items, methods=["POST"]),
        Route(f"{one}/items", list_items, methods=["GET"]),
        Route(f"{one}/items/{{item_id}}", get_item, methods=["GET"]),
        Route(f"{one}/items/{{item_id}}", delete_item, methods=["DELETE"]),
    ]
