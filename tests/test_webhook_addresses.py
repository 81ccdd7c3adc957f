"""A body's subscription is delivered only to public addresses, however its receiver's name resolves: the
scheduler resolves the name, sends nothing when any address is of the deployment's own network (loopback,
private, link-local), and connects to the address it judged, not to a second resolution. An operator's
subscription, and every one when TRAMITA_SUBSCRIPTION_PRIVATE_URLS allows it, may reach the deployment's network."""

from __future__ import annotations

import socket
from types import SimpleNamespace

import pytest

from domain.errors import InvalidActError
from domain.subscriptions import check_url, internal_allowed, parse_private_urls
from infrastructure import webhook
from scheduler.config import load
from scheduler.subscribers import Subscribers
from infrastructure.webhook import DeliveryError, post_signed
from tests.test_scheduler_webhook import Server

NAME = "receiver.example"


def resolving_to(monkeypatch, *addresses: str) -> None:  # noqa: ANN001
    """Make NAME resolve to `addresses` (every other name as it does)."""
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):  # noqa: ANN001, ANN202
        if host != NAME:  # the test's own receiver, on 127.0.0.1
            return real(host, port, *args, **kwargs)
        return [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
                for a in addresses]

    monkeypatch.setattr(webhook.socket, "getaddrinfo", getaddrinfo)


@pytest.mark.parametrize("address", ["127.0.0.1", "10.1.2.3", "192.168.0.9", "169.254.169.254", "::1",
                                     "::ffff:127.0.0.1", "0.0.0.0", "100.64.0.1", "fc00::1", "192.0.2.1",
                                     "224.0.0.1"])
def test_a_name_resolving_to_the_deployment_s_own_network_is_not_sent_to(monkeypatch, address):
    resolving_to(monkeypatch, "93.184.216.34", address)
    connected = []
    monkeypatch.setattr(webhook.socket, "create_connection", lambda *a, **k: connected.append(a))
    with pytest.raises(DeliveryError, match=rf"{NAME} resolves to {address}, an address of the deployment's own"):
        post_signed(f"http://{NAME}/alerts", b"{}", {}, public_only=True)
    assert connected == []


def test_a_name_that_does_not_resolve_is_a_failed_try(monkeypatch):
    def getaddrinfo(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(webhook.socket, "getaddrinfo", getaddrinfo)
    with pytest.raises(DeliveryError, match=f"{NAME} does not resolve"):
        post_signed(f"http://{NAME}/alerts", b"{}", {}, public_only=True)


def test_a_public_name_is_connected_to_at_the_address_judged_with_its_name_in_the_host_header(monkeypatch):
    receiver = Server([204])
    try:
        resolving_to(monkeypatch, "93.184.216.34")
        port = receiver.http.server_address[1]
        asked: list[tuple] = []
        real = socket.create_connection

        def create_connection(address, *args, **kwargs):  # noqa: ANN001, ANN202 - the judged address, rerouted
            asked.append(address)
            return real(("127.0.0.1", port), *args, **kwargs)

        monkeypatch.setattr(webhook.socket, "create_connection", create_connection)
        post_signed(f"http://{NAME}:{port}/alerts", b'{"a": 1}', {"webhook-id": "x"}, public_only=True)
        assert asked == [("93.184.216.34", port)]
        assert receiver.requests[0].headers["Host"] == f"{NAME}:{port}"
    finally:
        receiver.close()


def test_without_public_only_the_operators_webhook_reaches_the_deployment_s_network():
    receiver = Server([204])
    try:
        post_signed(receiver.url, b"{}", {})  # 127.0.0.1: the operators' own webhook, as configured
        assert len(receiver.requests) == 1
    finally:
        receiver.close()


@pytest.mark.parametrize(("token_id", "private_urls", "public_only"), [
    ("a-body-token", False, True), (None, False, False), ("a-body-token", True, False)],
    ids=["a-body-s", "an-operator-s", "a-body-s-when-the-deployment-allows-private-urls"])
def test_which_subscriptions_are_delivered_only_to_public_addresses(token_id, private_urls, public_only):
    subscription = SimpleNamespace(id="s-1", channel="webhook", url=f"http://{NAME}/alerts", token_id=token_id)
    assert internal_allowed(subscription, private_urls=private_urls) is not public_only
    app = SimpleNamespace(webhook_secret=lambda s: "whsec_" + "A" * 43 + "=",
                          record_alert_delivery=lambda *a, **k: None)
    subscribers = Subscribers(app, None, lambda *a, **k: None, 1, 1.0, private_urls=private_urls)
    hook = subscribers._webhook(subscription)
    try:
        assert hook.post.func is post_signed and hook.post.keywords == {"public_only": public_only}
    finally:
        hook.close(5)


@pytest.mark.parametrize(("text", "allowed"), [(None, False), ("", False), ("0", False), ("false", False),
                                               ("1", True), ("true", True), (" TRUE ", True)])
def test_the_scheduler_reads_the_same_private_urls_setting_as_the_api(text, allowed, tmp_path):
    assert parse_private_urls(text) is allowed
    environ = {} if text is None else {"TRAMITA_SUBSCRIPTION_PRIVATE_URLS": text}
    assert load(environ, f"sqlite:///{tmp_path / 'x.sqlite'}").subscription_private_urls is allowed


def test_a_malformed_private_urls_setting_is_refused_naming_it(tmp_path):
    with pytest.raises(ValueError, match="TRAMITA_SUBSCRIPTION_PRIVATE_URLS: 'yes' is not 1 or 0"):
        load({"TRAMITA_SUBSCRIPTION_PRIVATE_URLS": "yes"}, f"sqlite:///{tmp_path / 'x.sqlite'}")


@pytest.mark.parametrize("url", ["http://127.1/", "http://2130706433/", "http://0/", "http://0x7f.1/",
                                 "http://0177.0.0.1/", "http://[::ffff:7f00:1]/", "http://[fe80::1%25eth0]/"])
def test_a_subscription_to_the_deployment_s_own_network_written_in_another_form_is_refused_naming_the_url(url):
    """The resolver takes 127.1, 2130706433 and 0x7f.1 for 127.0.0.1 (inet_aton's forms): refused as that address
    is, when the subscription is made, not only when the scheduler would deliver."""
    with pytest.raises(InvalidActError, match="own network") as refused:
        check_url(url, private=False)
    assert refused.value.field == "url"
    assert check_url(url, private=True) == url


@pytest.mark.parametrize("url", ["http://exa mple.com/", "http://exa\tmple.com/", "http://a,b.example/",
                                 "http://[not-an-address]/"])
def test_a_subscription_whose_host_is_not_a_name_or_an_address_is_refused_naming_the_url(url):
    with pytest.raises(InvalidActError) as refused:
        check_url(url, private=True)
    assert refused.value.field == "url"


@pytest.mark.parametrize("url", ["https://alertas.tre-ac.jus.br/tramita", "http://1e100.net/", "http://8.8.8.8/",
                                 "https://[2001:4860:4860::8888]:8443/x"])
def test_a_subscription_to_a_public_name_or_address_is_taken(url):
    assert check_url(url, private=False) == url


def test_an_ipv6_literal_without_a_port_is_connected_to_at_its_address_and_the_scheme_s_port(monkeypatch):
    """http.client read an unbracketed IPv6 address's last group as the port: https://[2606:4700:4700::1111]/hook
    went to port 1111, http://[::1]/x to host ':' port 1."""
    receiver = Server([204])
    try:
        port = receiver.http.server_address[1]
        asked: list[tuple] = []
        real = socket.create_connection

        def create_connection(address, *args, **kwargs):  # noqa: ANN001, ANN202 - rerouted to the test's receiver
            asked.append(address)
            return real(("127.0.0.1", port), *args, **kwargs)

        monkeypatch.setattr(webhook.socket, "create_connection", create_connection)
        post_signed("http://[2606:4700:4700::1111]/hook", b"{}", {"webhook-id": "x"})
        assert asked == [("2606:4700:4700::1111", 80)]
        assert receiver.requests[0].headers["Host"] == "[2606:4700:4700::1111]"
    finally:
        receiver.close()


@pytest.mark.parametrize("url", ["http://receiver.example:99999/hook", "http://receiver.example:0/hook"])
def test_a_port_out_of_range_is_a_failed_try_not_an_unrecorded_delivery(url):
    with pytest.raises(DeliveryError, match="is not an address"):
        post_signed(url, b"{}", {})


def test_connecting_over_every_address_of_a_name_takes_the_try_s_time_in_all_not_that_time_each():
    """Four addresses that never complete the handshake took four times the try's time: each connection now gets
    what is left of one deadline, and none is tried once it has passed."""
    now = [0.0]
    given: list[float] = []

    def create_connection(address, timeout, source=None):  # noqa: ANN001, ANN202
        given.append(timeout)
        now[0] += timeout  # the handshake never completes: the whole allowance goes by
        raise TimeoutError("timed out")

    addresses = [("93.184.216.%d" % n, 443) for n in range(1, 5)]
    original = webhook.socket.create_connection
    webhook.socket.create_connection = create_connection
    try:
        with pytest.raises(TimeoutError):
            webhook.connect_within(addresses, 3.0, clock=lambda: now[0])
    finally:
        webhook.socket.create_connection = original
    assert given == [3.0]


#: IPv6 addresses that carry 127.0.0.1 or 10.0.0.1, which the network delivers to: NAT64 (well-known and
#: local-use prefixes), 6to4, Teredo (the client inverted), IPv4-compatible and IPv4-mapped.
CARRYING_AN_INTERNAL_IPV4 = ["64:ff9b::7f00:1", "64:ff9b::a00:1", "64:ff9b:1::7f00:1", "2002:7f00:1::",
                             "2002:a00:1:1::1", "2001:0:4136:e378:8000:63bf:80ff:fffe", "::7f00:1", "::a00:1",
                             "::ffff:a00:1"]


@pytest.mark.parametrize("address", CARRYING_AN_INTERNAL_IPV4)
def test_a_subscription_to_an_ipv6_address_carrying_an_internal_ipv4_one_is_refused_naming_the_url(address):
    with pytest.raises(InvalidActError, match="own network") as refused:
        check_url(f"http://[{address}]/alerts", private=False)
    assert refused.value.field == "url"


@pytest.mark.parametrize("address", CARRYING_AN_INTERNAL_IPV4)
def test_a_name_resolving_to_an_ipv6_address_carrying_an_internal_ipv4_one_is_not_connected_to(monkeypatch, address):
    resolving_to(monkeypatch, address)
    connected = []
    monkeypatch.setattr(webhook.socket, "create_connection", lambda *a, **k: connected.append(a))
    with pytest.raises(DeliveryError, match=rf"{NAME} resolves to {address}, an address of the deployment's own"):
        post_signed(f"http://{NAME}/alerts", b"{}", {}, public_only=True)
    assert connected == []


@pytest.mark.parametrize("url", ["http://[64:ff9b::808:808]/", "http://[2002:808:808::1]/", "http://[::808:808]/",
                                 "http://[::ffff:808:808]/"])
def test_an_ipv6_address_carrying_a_public_ipv4_one_is_taken_as_that_public_address(url):
    assert check_url(url, private=False) == url
