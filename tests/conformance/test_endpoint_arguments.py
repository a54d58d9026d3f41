"""Every endpoint argument that cannot work stops the command with exit 2 and one sentence naming it, before any
case runs (and before the endpoint is even tried: the URLs here point where nothing listens). A value click refuses
while parsing is said in click's words ("Invalid value for '--jobs': …"), one line all the same."""
from __future__ import annotations

import pytest

from conformance.cli import main
from tests.support.loopback import free_port

URL = "http://127.0.0.1:9/users/{subject}/orders"


def _endpoint(*extra: str, url: str = URL, tool: str = "get_orders") -> list[str]:
    return ["endpoint", "--url", url, "--method", "GET", "--tool", tool, *extra]


BAD = {
    "tool-with-symbols": (_endpoint(tool="bad name!"), "--tool 'bad name!' is not a tool name"),
    "tool-starting-with-a-digit": (_endpoint(tool="1st"), "--tool '1st' is not a tool name"),
    "tool-too-long": (_endpoint(tool="t" * 65), "is not a tool name: 1 to 64 letters"),
    "unclosed-placeholder": (_endpoint(url="http://127.0.0.1:9/users/{subject/orders"),
                             "has a brace that opens or closes no placeholder"),
    "stray-closing-brace": (_endpoint(url="http://127.0.0.1:9/users/subject}/orders"),
                            "has a brace that opens or closes no placeholder"),
    "placeholder-not-a-name": (_endpoint(url="http://127.0.0.1:9/users/{user-id}"),
                               "{user-id} is not a placeholder name"),
    "empty-placeholder": (_endpoint(url="http://127.0.0.1:9/users/{}"), "{} is not a placeholder name"),
    "subject-misspelt": (_endpoint(url="http://127.0.0.1:9/users/{Subject}"),
                         "the subject's placeholder is spelled {subject}, in lower case"),
    "placeholder-in-host": (_endpoint(url="http://{subject}.example:9/"), "has a placeholder outside its path"),
    "placeholder-in-query": (_endpoint(url="http://127.0.0.1:9/orders?user={subject}"),
                             "has a placeholder outside its path"),
    "dot-segment": (_endpoint(url="http://127.0.0.1:9/a/../orders"), "has a . or .. segment"),
    "not-http": (_endpoint(url="ftp://127.0.0.1/x"), "is not an absolute http or https URL"),
    "user-info": (_endpoint(url="http://me:pw@127.0.0.1:9/x"), "carries user info, a fragment or a space"),
    "fragment": (_endpoint(url="http://127.0.0.1:9/x#top"), "carries user info, a fragment or a space"),
    "port-out-of-range": (_endpoint(url="http://127.0.0.1:99999/x"), "is not a URL (Port out of range"),
    "empty-subject": (_endpoint("--subject", ""), "--subject '' is not a subject"),
    "dot-subject": (_endpoint("--subject", ".."), "--subject '..' is not a subject"),
    "subject-with-a-line-break": (_endpoint("--subject", "a\nb"), "--subject 'a\\nb' is not a subject"),
    "other-subject-is-the-subject": (_endpoint("--subject", "al", "--other-subject", "al"),
                                     "--other-subject 'al' is --subject itself"),
    "other-subject-without-a-subject-url": (_endpoint("--other-subject", "bob", url="http://127.0.0.1:9/products"),
                                            "--other-subject is for a URL carrying {subject}"),
    "param-not-k-v": (_endpoint("--param", "nope"), "--param 'nope' is not k=v"),
    "param-not-json": (_endpoint("--param", "n:=[1,"), "the value after := is not JSON"),
    "param-twice": (_endpoint("--param", "a=1", "--param", "a=2"), "--param a is given twice"),
    "param-named-like-the-subject": (_endpoint("--param", "Subject=x"), "--param Subject: a parameter's name"),
    "param-name-not-a-name": (_endpoint("--param", "a b=1"), "--param a b: a parameter's name"),
    "placeholder-without-param": (_endpoint(url="http://127.0.0.1:9/orders/{order}"),
                                  "the URL's {order} has no --param order"),
    "array-in-a-query": (_endpoint("--param", "ids:=[1]"), "only a body parameter may be an array"),
    "same-port-twice": (_endpoint("--jwks-port", "9000", "--untrusted-port", "9000"),
                        "--jwks-port and --untrusted-port are both 9000"),
    "the-endpoints-own-port": (_endpoint("--jwks-port", "9"), "--jwks-port 9 is the endpoint's own port"),
    "port-not-a-port": (_endpoint("--jwks-port", "70000"), "Invalid value for '--jwks-port': 70000 is not a port"),
    "port-not-a-number": (_endpoint("--untrusted-port", "x"), "Invalid value for '--untrusted-port': 'x' is not a port"),
    "issuer-host-with-a-scheme": (_endpoint("--issuer-host", "http://ci-runner"),
                                  "--issuer-host 'http://ci-runner' is not a host name or IPv4 address"),
    "issuer-host-unspecified": (_endpoint("--issuer-host", "0.0.0.0"),
                                "--issuer-host 0.0.0.0 is not an address a backend can reach the kit at"),
    "issuer-host-ipv6": (_endpoint("--issuer-host", "::1"), "--issuer-host ::1 is not an address a backend can"),
    "rotation-wait-too-long": (_endpoint("--rotation-wait", "121"),
                               "Invalid value for '--rotation-wait': '121' is not a number of seconds from 0 to 120"),
    "rotation-wait-not-a-number": (_endpoint("--rotation-wait", "soon"),
                                   "Invalid value for '--rotation-wait': 'soon' is not a number of seconds"),
    "algorithm-unknown": (_endpoint("--algorithm", "HS256"), "Invalid value for '--algorithm': 'HS256' is not one of 'ES256', 'EdDSA', 'RS256'"),
    "method-unknown": (["endpoint", "--url", URL, "--method", "TRACE", "--tool", "t"],
                       "Invalid value for '--method': 'TRACE' is not one of GET, POST"),
    "jobs-zero": (_endpoint("--jobs", "0"), "Invalid value for '--jobs': '0' is not a whole number of at least 1"),
    "jobs-not-a-number": (_endpoint("--jobs", "many"), "Invalid value for '--jobs': 'many' is not a whole number"),
    "case-matching-nothing": (_endpoint("--case", "endpoint/valid", "--case", "endpoint/typo"),
                              "no case matches --case endpoint/typo"),
    "skip-matching-nothing": (_endpoint("--skip", "endpoint/key-rotaton"), "no case matches --skip endpoint/key-rotaton"),
    "area-matching-nothing": (_endpoint("--area", "endpont"), "no case matches --area endpont"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_an_argument_that_cannot_work_exits_2_naming_it_before_any_case(name, capsys):
    argv, says = BAD[name]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""  # no banner, no case line
    assert says in err, err
    assert len(err.splitlines()) == 1, err  # one sentence, the option named in it
    assert "cannot reach the endpoint" not in err


def test_json_and_junit_into_one_file_or_a_directory_exit_2(tmp_path, capsys):
    assert main(_endpoint("--json", str(tmp_path / "r"), "--junit", str(tmp_path / "r"))) == 2
    assert "--json and --junit are both" in capsys.readouterr().err
    assert main(_endpoint("--junit", str(tmp_path))) == 2
    assert f"--junit {tmp_path} is a directory" in capsys.readouterr().err


def test_a_key_file_of_another_algorithm_exits_2_naming_both(tmp_path, capsys):
    from conformance.tokens import SigningKey

    key_file = tmp_path / "key.pem"
    key_file.write_bytes(SigningKey.generate("EdDSA").to_pem())
    url = f"http://127.0.0.1:{free_port()}/x"
    assert main(_endpoint("--key-file", str(key_file), url=url)) == 2
    assert f"--key-file {key_file}: it holds an EdDSA key, not an ES256 one (--algorithm ES256)" in \
        capsys.readouterr().err


def test_the_options_that_can_work_get_as_far_as_the_endpoint(capsys):
    # The same checks let a good command line through, to the next step: reaching the endpoint.
    url = f"http://127.0.0.1:{free_port()}/users/{{subject}}/orders/{{order}}"
    argv = _endpoint("--param", "order=7", "--param", "n:=3", "--subject", "alice", "--other-subject", "bob",
                     "--issuer-host", "localhost", "--algorithm", "RS256", "--rotation-wait", "1", url=url)
    assert main(argv) == 2
    assert "could not run: cannot reach the endpoint at 127.0.0.1" in capsys.readouterr().err
