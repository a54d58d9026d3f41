"""The error catalogue: every rule id the service reports, with its one sentence, and the violation that carries it.

`RULES` maps each stable rule id to its sentence: the spec's own, word for word, where the spec words the rule, and
a sentence of the same style, fixed here once, where it does not. The registry's rules, the importer, conversations,
the API, the MCP server, the dashboard and the conformance data all take their messages from this table; it sits
below every layer that raises or renders a violation, so none of them reaches into another for a sentence.
"""
from __future__ import annotations

from dataclasses import dataclass

from service import limits
from service.definition import ELEMENT_TYPES, LOCATIONS, METHODS, RESERVED_TOOL_NAMES, SCOPES, TYPES
from service.limits import MAX_VIOLATIONS


@dataclass(frozen=True)
class Violation:
    """One broken rule: which field, which rule (a stable kebab id) and the spec's sentence."""

    field: str
    rule: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"field": self.field, "rule": self.rule, "message": self.message}


#: The last of a list cut at MAX_VIOLATIONS, in place of the problems left out.
_MORE_VIOLATIONS_SENTENCE = (f"More problems were found than one answer lists ({MAX_VIOLATIONS}); "
                             "fix these and try again.")
MORE_VIOLATIONS = Violation("", "more-violations", _MORE_VIOLATIONS_SENTENCE)


def _one_of(choices: tuple[str, ...]) -> str:
    """The choices as a sentence names them: "shared or per_user", "one of query, path, or body"."""
    if len(choices) == 2:
        return f"{choices[0]} or {choices[1]}"
    return f"one of {', '.join(choices[:-1])}, or {choices[-1]}"


RULES: dict[str, str] = {
    # The spec's failure modes, word for word.
    "name-taken": "A tool with this name already exists.",
    "duplicate-parameter": "A parameter with this name already exists on this tool.",
    "per-user-needs-subject": "A per-user tool needs a subject parameter.",
    "subject-must-be-string": "The subject parameter must be a string.",
    "session-start-only-subject": "A tool that runs at session start may declare only the subject parameter.",
    "session-start-no-approval": "A session-start tool cannot require approval: no person is there to approve "
                                 "before the first reply.",
    "body-needs-body-method": "A GET or DELETE request cannot carry a body parameter.",
    "path-needs-placeholder": "A path parameter needs a matching placeholder in the URL.",
    "type-location-mismatch": "This type cannot ride in that location.",
    "array-needs-element-type": "An array parameter must say what its elements are.",
    "element-type-only-on-array": "Only an array parameter has an element type.",
    # Rules the spec states without a sentence, worded here once in the same style.
    "name-format": "A tool name uses only letters, digits, and underscores, and does not start with a digit.",
    "name-reserved": f"A tool cannot be named {_one_of(RESERVED_TOOL_NAMES).removeprefix('one of ')}: the platform "
                     "uses those words for pages and routes of its own. Pick another name.",
    "parameter-name-format": "A parameter name uses only letters, digits, and underscores, and does not start with a "
                             "digit.",
    "shared-has-no-subject": "A shared tool takes no subject parameter.",
    "subject-spelling": "The subject parameter is spelled subject, in lower case.",
    "placeholder-needs-parameter": "A placeholder in the URL needs a path parameter of the same name.",
    "placeholder-outside-path": "A placeholder can stand only in the URL's path.",
    "path-parameter-required": "A path parameter is always required, since the URL cannot be built without it.",
    "url-format": "The URL must be an absolute http or https address, with no user info and no fragment.",
    "method-unsupported": f"The method must be {_one_of(METHODS)}.",
    "scope-unsupported": f"The scope must be {_one_of(SCOPES)}.",
    "type-unsupported": f"The type must be {_one_of(TYPES)}.",
    "location-unsupported": f"The location must be {_one_of(LOCATIONS)}.",
    "element-type-unsupported": f"The element type must be {_one_of(ELEMENT_TYPES)}.",
    "description-required": "A tool needs a description, written for the model.",
    "field-required": "This field is required.",
    # A definition's blank fields, as the dashboard's register form names them.
    "tool-name-required": "A tool needs a tool name: the function name the model calls.",
    "method-required": f"A tool needs a method, {_one_of(METHODS)}.",
    "url-required": "A tool needs a URL: the address the platform calls.",
    "field-type": "This field has the wrong type.",
    "field-unknown": "This field is not part of a tool definition.",
    "field-too-long": "This field is longer than the platform allows.",
    "entitlement-format": "An entitlement is one claim, such as products:write, with no spaces.",
    "too-many-parameters": f"A tool can declare at most {limits.MAX_PARAMETERS} parameters.",
    "name-immutable": "A tool's name is set when it is registered and cannot change afterward.",
    "published-read-only": "A published version is read-only. Start a new draft to change it.",
    # Drafts, versions, projects and pins.
    "no-draft": "This tool has no draft. Start a new draft to change it.",
    "draft-exists": "This tool already has a draft. Save that draft instead of starting another.",
    "no-published-version": "This tool has no published version to start a draft from.",
    "project-immutable": "A tool's project is set when it is registered and cannot change afterward.",
    "project-unknown": "No project with this name exists in this organization.",
    "project-name-taken": "A project with this name already exists.",
    "project-no-draft": "This project has no draft version. Start a new draft version from its latest published one.",
    "project-draft-exists": "This project already has a draft version.",
    "pin-unknown-tool": "No tool with this name exists in this organization.",
    "pin-unknown-version": "This tool has no published version with that number.",
    "pin-no-draft": "This tool has no draft to pin.",
    "pin-other-project": "A project-specific tool can be pinned only by its own project.",
    "pin-duplicate": "A project version pins each tool once.",
    "pin-version-format": "A pin's version is a published version number or \"draft\".",
    "too-many-pins": f"A project version pins at most {limits.MAX_PINS} tools.",
    "url-path-format": "The URL's path cannot hold a . or .. segment or an unmatched brace.",
    "query-key-in-url": "A query parameter cannot repeat a key the URL already fixes.",
    "unbuildable": "The platform cannot build a safe request from this definition.",
    # What a tool lets the model see (docs/shaping.md): its response shape, error fields and outcome messages.
    "shape-unparsable": "A response shape must be a JMESPath expression that parses, such as "
                        "orders[*].{id: id, status: status}.",
    "error-field-format": "An error field names one top-level field of the error body: letters, digits, underscores, "
                          "and hyphens, not starting with a digit or a hyphen.",
    "error-field-duplicate": "An error field is listed once.",
    "too-many-error-fields": f"A tool lets the model read at most {limits.MAX_ERROR_FIELDS} fields of an error.",
    "outcome-key-format": "An outcome is a failure kind, such as refused, or a kind and a status, such as "
                          "refused:404; empty names a successful answer with no body.",
    "outcome-message-format": f"An outcome message is a sentence of at most {limits.MAX_OUTCOME_MESSAGE_CHARS} "
                              "characters, with no control characters.",
    "too-many-outcome-messages": f"A tool words at most {limits.MAX_OUTCOME_MESSAGES} outcomes.",
    # Importing an OpenAPI document (service/importing): the document, then each operation and what it carries.
    "document-required": "Give the OpenAPI document as document, or its address as url, but not both.",
    "document-too-large": f"The document is larger than {limits.MAX_IMPORT_DOCUMENT_BYTES:,} bytes, the most an "
                          "import reads.",
    "document-unreadable": "The document is neither JSON nor YAML that can be read.",
    "document-too-complex": f"The document expands to more than {limits.MAX_IMPORT_DOCUMENT_VALUES:,} values (its "
                            "aliases, $refs and allOf parts counted at each use), nests deeper than "
                            f"{limits.MAX_IMPORT_DOCUMENT_DEPTH} levels or takes more than "
                            f"{limits.IMPORT_DEADLINE_SECONDS:g} s to read, past what an import reads.",
    "document-not-openapi": "The document is not an OpenAPI description: it needs an openapi version and its paths "
                            "as a mapping.",
    "swagger-unsupported": "Swagger 2.0 is not supported: convert the document to OpenAPI 3.0 or 3.1 and import "
                           "that.",
    "openapi-version-unsupported": "Only OpenAPI 3.0 and 3.1 documents can be imported.",
    "too-many-operations": f"One import takes at most {limits.MAX_IMPORT_OPERATIONS:,} operations.",
    "url-unfetchable": "The document could not be fetched from this address.",
    "url-address-denied": "The platform may not reach this address: it is neither public nor in the allowed "
                          "networks.",
    "server-required": "The document names no absolute server address for its operations; give one as server.",
    "server-unknown": "The server is one of the document's servers, by its URL or its index, or an absolute http "
                      "or https address.",
    "subject-parameter-unknown": "No operation of the document has a parameter of this name to carry the subject.",
    "operation-unknown": "No operation of the document has this operationId, or this method and path.",
    "operation-not-chosen": "This operation was not among the ones chosen.",
    "operation-name-collision": "Another chosen operation of this document becomes a tool of the same name.",
    "ref-remote": "A $ref to another document is not followed: only references within this document are resolved.",
    "ref-loop": f"This $ref leads back to itself, or through more than {limits.MAX_IMPORT_REF_HOPS} others, "
                "without reaching a value.",
    "ref-unresolved": "This $ref points at nothing in this document.",
    "header-not-carried": "A header parameter is not carried: a tool sends values only in the query string, the "
                          "URL path and a JSON body.",
    "cookie-not-carried": "A cookie parameter is not carried: a tool sends values only in the query string, the "
                          "URL path and a JSON body.",
    "nested-object-not-carried": "An object with fields of its own is not carried: nested shapes are not modelled "
                                 "yet.",
    "array-of-structures-not-carried": "An array of objects or of lists is not carried: array elements are "
                                       "scalars.",
    "schema-not-carried": "A value with no single type (oneOf, anyOf, not, or no type at all) is not carried.",
    "body-not-json": "A request body that is not JSON is not carried: a tool sends its body as a JSON object.",
    "body-not-object": "A request body is carried only as the declared fields of one JSON object.",
    "body-field-required": "The request body's schema requires this field, and the tool cannot send the body, so no "
                           "call it makes would be accepted.",
    "auth-not-carried": "The operations' own credentials (the document's security) are not carried: each call "
                        "carries the platform's signed assertion as its Bearer token instead.",
    "servers-ignored": "The document's other servers are not used: every tool calls the server named above, or an "
                       "operation's own.",
    "approval-kept": "Kept from the tool's latest version: each call waits for the person's approval, a choice that "
                     "differs from what this import would set. Change it in the import's preview or in the draft.",
    "approval-off-kept": "Kept from the tool's latest version: calls go out without the person's approval, a choice "
                         "that differs from what this import would set. Change it in the import's preview or in the "
                         "draft.",
    # Why an imported operation does or does not wait for the person's approval, as GPT Actions decides it.
    "approval-marked": "The operation is marked x-openai-isConsequential: true, so each call waits for the person's "
                       "approval.",
    "approval-marked-off": "The operation is marked x-openai-isConsequential: false, so its calls go out without the "
                           "person's approval.",
    "approval-by-method": "With no x-openai-isConsequential mark, a method other than GET or HEAD may change "
                          "something, so each call waits for the person's approval.",
    "approval-chosen": "Chosen for this import by the person, in place of what the importer would set.",
    "approval-reading-method": "With no x-openai-isConsequential mark, a GET or HEAD only reads, so its calls go out "
                               "without the person's approval.",
    "entitlement-kept": "Kept from the tool's latest version: an OpenAPI document has no way to state the "
                        "entitlement a tool requires.",
    "shaping-kept": "Kept from the tool's latest version: an OpenAPI document has no way to state what the model sees "
                    "of an answer.",
    # Text and numbers anywhere (service.text, service.limits), and a session token's subject.
    "control-character": "This field cannot hold control characters, such as NUL, tabs, or line breaks.",
    "description-control-character": "A description can hold tabs and line breaks, but no other control characters.",
    "unpaired-surrogate": "This field holds an unpaired surrogate, which is not text.",
    "number-range": "This number is outside the range the service stores.",
    "field-invalid": "This value is not one this field takes.",
    "entitlements-format": "Entitlements are a list of claims such as products:write, with no spaces.",
    "ttl-range": f"A session token lives from 1 to {limits.SESSION_TOKEN_MAX_SECONDS} seconds.",
    "more-violations": MORE_VIOLATIONS.message,
    "subject-format": f"A subject is 1 to {limits.MAX_SUBJECT_CHARS} characters with no control characters, and is "
                      "not . or .., so it can stand as a path segment.",
    "display-name-format": f"A display name is free text of at most {limits.MAX_DISPLAY_NAME_CHARS} characters.",
    "field-in-draft": "This field is part of the definition: change it by saving the draft.",
    "project-unpublished": "This project has no published version yet.",
    "project-name-format": "A project name uses letters, digits, hyphens, and underscores, and starts with a letter or "
                           "digit.",
    # Organizations and keys.
    "slug-format": "An organization slug uses lower-case letters, digits, and hyphens, and starts with a letter or "
                   "digit.",
    "slug-taken": "An organization with this slug already exists.",
    "role-unsupported": "The role must be one of admin, agent, or backend.",
    # Requests around the definitions: bodies, versions, conversations, the dashboard's forms, agents' arguments.
    "malformed-body": "The request body must be JSON.",
    "version-format": 'A version is a published version number or "draft".',
    "version-missing": "This tool has no such version.",
    "calls-format": f"A step carries from 1 to {limits.MAX_CALLS_PER_STEP} calls.",
    "call-format": "A call has a string id and a string name.",
    "arguments-format": "The arguments must be a JSON object, such as {\"status\": \"open\"}.",
    "message-format": f"A message is a non-empty string of at most {limits.MAX_MESSAGE_CHARS} characters.",
    "time-format": "Enter a time as YYYY-MM-DD HH:MM, in UTC.",
    "time-order": "The end of the time range must come after its start.",
    "kind-unknown": "Choose one of the listed kinds.",
    "argument-required": "This argument is required.",
    "argument-type": "This argument has the wrong type.",
    "argument-unknown": "This tool takes no argument of this name.",
    # Pages of a list (tools, projects, audit records, a tool's history).
    "page-limit": f"A page holds from 1 to {limits.MAX_PAGE} items.",
    "search-too-long": f"A search is at most {limits.MAX_SEARCH_CHARS} characters.",
    "after-format": f"Page after a name of at most {limits.MAX_TOOL_NAME_CHARS} characters: the last one of the "
                    "page before (its `next`).",
    "cursor-invalid": "This cursor is not one a list gave; list again without it.",
    # Approvals of held calls.
    "decision-format": "A decision is approve or decline.",
    "approval-pending": "This call awaits the person's decision.",
    "approval-sending": "This approved call is still being sent; continue once it answers.",
    # An organization's own identity providers (service/identity).
    "provider-name-format": "A provider name uses letters, digits, hyphens, and underscores, starts with a letter or "
                            "digit, and is at most 64 characters.",
    "issuer-format": "An issuer is an absolute https or http address with no query, fragment, or user info, written "
                     "exactly as the provider's tokens name it.",
    "issuer-platform": "The platform's own issuers cannot be trusted as an identity provider: their tokens are "
                       "session tokens already.",
    "audience-format": "An audience is the one value the provider's tokens carry as aud, at most 512 characters "
                       "with no control characters.",
    "claim-name-format": "A claim name is 1 to 200 characters with no spaces or control characters.",
    "algorithms-format": "Algorithms are a list of one or more of RS256, RS384, RS512, PS256, PS384, PS512, ES256, "
                         "ES384, ES512, or EdDSA, each once.",
    "issuer-unreachable": "The provider's discovery document or key set could not be read from this issuer.",
    "discovery-invalid": "The provider's discovery document must name this issuer, exactly, and an absolute "
                         "jwks_uri.",
    "key-set-invalid": "The provider's key set holds no signing key for the configured algorithms.",
    "provider-taken": "An identity provider with this issuer and audience is already trusted; give each trust its "
                      "own audience.",
    "too-many-providers": f"An organization trusts at most {limits.MAX_IDENTITY_PROVIDERS} identity providers.",
    "token-required": "Paste an access token to test.",
}

def violation(field: str, rule: str) -> Violation:
    """The violation of `rule` on `field`, with the rule's one sentence."""
    return Violation(field=field, rule=rule, message=RULES[rule])
