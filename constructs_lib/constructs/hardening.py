"""Stricter settings a stack can opt in to: a customer-managed KMS key everywhere, Lambda in a VPC.

``constructs_lib:cmk-everywhere`` encrypts the table and its stream, the audit table, the salt
secret, the failure queues, log groups and function environments with one rotating key per stack.
``constructs_lib:lambda-in-vpc`` runs every generated function in one VPC per stack (isolated
subnets, a DynamoDB gateway endpoint, a Secrets Manager endpoint when an audit hashes values, flow
logs). Set them as context (``cdk synth -c constructs_lib:cmk-everywhere=true``, ``cdk.json``,
``cdk.App(context=...)``) or bring your own key and VPC with :meth:`Hardening.configure`.

See docs/adr/0025-hardening-by-context-flags.md and docs/security/checks.md ("Stricter settings").
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from constructs import Construct, IConstruct

from . import nag
from .exceptions import ConstructPropsError

#: Context flag: one customer-managed KMS key per stack encrypts everything the constructs create.
CMK_CONTEXT = "constructs_lib:cmk-everywhere"
#: Context flag: every generated function runs in a VPC (isolated subnets, endpoints, flow logs).
VPC_CONTEXT = "constructs_lib:lambda-in-vpc"

#: Address range of the VPC created for the functions (isolated; it never peers with anything).
VPC_CIDR = "10.64.0.0/16"

#: The actions a Lambda execution role needs to attach its function to a VPC (the statement of
#: the AWS-managed ``service-role/AWSLambdaVPCAccessExecutionRole`` policy).
LAMBDA_VPC_ACTIONS = (
    "ec2:AssignPrivateIpAddresses",
    "ec2:CreateNetworkInterface",
    "ec2:DeleteNetworkInterface",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeSubnets",
    "ec2:UnassignPrivateIpAddresses",
)


def _flag(scope: IConstruct, key: str) -> bool:
    value = scope.node.try_get_context(key)
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "1", "yes", "false", "0", "no", ""):
        return value.strip().lower() in ("true", "1", "yes")
    raise ConstructPropsError(f"context {key}={value!r} must be true or false")


@dataclass(frozen=True)
class VpcPlacement:
    """Where a generated function runs: the VPC, its subnets, and whether we created the VPC."""

    vpc: ec2.IVpc
    subnets: ec2.SubnetSelection
    owned: bool


class Hardening(Construct):
    """The stricter settings of one stack (one per stack, found or created by :meth:`of`).

    Parameters
    ----------
    encryption_key
        Customer-managed key to use everywhere. Default None: with ``cmk_everywhere`` on, one is
        created (``<stack>/ConstructsLibHardening/Key``, rotation on, RETAIN).
    vpc
        VPC for every generated function. Default None: with ``lambda_in_vpc`` on, one is created.
    vpc_subnets
        Subnets of ``vpc`` to use. Default: Lambda's default (private subnets). Only with ``vpc``.
    cmk_everywhere, lambda_in_vpc
        Explicit switches. Default None: on when the key / VPC is given, otherwise read from the
        context flags :data:`CMK_CONTEXT` / :data:`VPC_CONTEXT`.
    """

    ID = "ConstructsLibHardening"

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        encryption_key: kms.IKey | None = None,
        vpc: ec2.IVpc | None = None,
        vpc_subnets: ec2.SubnetSelection | None = None,
        cmk_everywhere: bool | None = None,
        lambda_in_vpc: bool | None = None,
    ) -> None:
        super().__init__(scope, id)
        if vpc_subnets is not None and vpc is None:
            raise ConstructPropsError("Hardening: vpc_subnets needs vpc (the subnets of which VPC?)")
        if encryption_key is not None and cmk_everywhere is False:
            raise ConstructPropsError("Hardening: encryption_key given with cmk_everywhere=False; drop one of them")
        if vpc is not None and lambda_in_vpc is False:
            raise ConstructPropsError("Hardening: vpc given with lambda_in_vpc=False; drop one of them")
        self.cmk_everywhere = (
            cmk_everywhere if cmk_everywhere is not None else encryption_key is not None or _flag(self, CMK_CONTEXT)
        )
        self.lambda_in_vpc = lambda_in_vpc if lambda_in_vpc is not None else vpc is not None or _flag(self, VPC_CONTEXT)
        self._key = encryption_key
        self._vpc = vpc
        self._subnets = vpc_subnets
        self._secrets_endpoint: ec2.InterfaceVpcEndpoint | None = None
        if self._key is not None:
            self._allow_logs(self._key)
        _SETTINGS[cdk.Stack.of(self)] = self

    # Finding the stack's settings -------------------------------------------------------------
    @classmethod
    def configure(
        cls,
        stack: cdk.Stack,
        *,
        encryption_key: kms.IKey | None = None,
        vpc: ec2.IVpc | None = None,
        vpc_subnets: ec2.SubnetSelection | None = None,
        cmk_everywhere: bool | None = None,
        lambda_in_vpc: bool | None = None,
    ) -> Hardening:
        """Set ``stack``'s stricter settings; call it before adding constructs to the stack."""
        if not isinstance(stack, cdk.Stack):
            raise ConstructPropsError(f"Hardening.configure: {stack!r} is not a cdk.Stack")
        if stack.node.try_find_child(cls.ID) is not None:
            raise ConstructPropsError(
                f"Hardening.configure: stack {stack.node.path!r} already has its settings (configure it once, "
                "before adding constructs_lib constructs)"
            )
        return cls(stack, cls.ID, encryption_key=encryption_key, vpc=vpc, vpc_subnets=vpc_subnets,
                   cmk_everywhere=cmk_everywhere, lambda_in_vpc=lambda_in_vpc)

    @classmethod
    def of(cls, scope: IConstruct) -> Hardening | _Defaults:
        """The settings of ``scope``'s stack (created from the context flags on first use)."""
        stack = cdk.Stack.of(scope)
        known = _SETTINGS.get(stack)
        if known is not None:
            return known
        found = stack.node.try_find_child(cls.ID)
        if isinstance(found, Hardening):
            return found
        if _flag(stack, CMK_CONTEXT) or _flag(stack, VPC_CONTEXT):
            return cls(stack, cls.ID)
        # The flags cannot change any more (CDK refuses context once a stack has children) and a
        # Hardening created later replaces this entry: asking again need not cross to jsii.
        _SETTINGS[stack] = _DEFAULTS
        return _DEFAULTS

    # The key ----------------------------------------------------------------------------------
    def key(self, who: str) -> kms.IKey | None:
        """The customer-managed key when ``cmk_everywhere`` is on, else None. ``who`` names the
        construct asking (for the region error)."""
        if not self.cmk_everywhere:
            return None
        if self._key is None:
            if cdk.Token.is_unresolved(cdk.Stack.of(self).region):
                raise ConstructPropsError(
                    f"{who}: {CMK_CONTEXT} needs a stack with a concrete region (a TableV2 replica names its "
                    "key per region); give the stack env=cdk.Environment(region=...)"
                )
            key = kms.Key(
                self, "Key", enable_key_rotation=True, removal_policy=cdk.RemovalPolicy.RETAIN,
                description=f"Encrypts every resource constructs_lib creates in stack {cdk.Stack.of(self).stack_name}",
            )
            self._allow_logs(key)
            self._key = key
        return self._key

    def _allow_logs(self, key: kms.IKey) -> None:
        """Let CloudWatch Logs encrypt this account's log groups in this region with ``key``."""
        stack = cdk.Stack.of(self)
        key.add_to_resource_policy(iam.PolicyStatement(
            sid="AllowCloudWatchLogsOfThisAccount",
            principals=[iam.ServicePrincipal(f"logs.{stack.region}.amazonaws.com")],
            actions=["kms:Decrypt*", "kms:Describe*", "kms:Encrypt*", "kms:GenerateDataKey*", "kms:ReEncrypt*"],
            resources=["*"],  # in a key policy, "*" is this key
            conditions={"ArnLike": {"kms:EncryptionContext:aws:logs:arn":
                                    f"arn:{stack.partition}:logs:{stack.region}:{stack.account}:log-group:*"}},
        ))

    # The VPC ----------------------------------------------------------------------------------
    def placement(self) -> VpcPlacement | None:
        """Where generated functions run when ``lambda_in_vpc`` is on, else None."""
        if not self.lambda_in_vpc:
            return None
        if self._vpc is None:
            vpc = ec2.Vpc(
                self, "Vpc", max_azs=2, nat_gateways=0, ip_addresses=ec2.IpAddresses.cidr(VPC_CIDR),
                subnet_configuration=[ec2.SubnetConfiguration(
                    name="Functions", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED, cidr_mask=24,
                )],
                gateway_endpoints={"DynamoDB": ec2.GatewayVpcEndpointOptions(
                    service=ec2.GatewayVpcEndpointAwsService.DYNAMODB,
                )},
            )
            flow_logs = logs.LogGroup(
                self, "FlowLogs", retention=logs.RetentionDays.ONE_YEAR, removal_policy=cdk.RemovalPolicy.RETAIN,
                encryption_key=self.key("Hardening"),
            )
            vpc.add_flow_log("FlowLog", destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_logs))
            self._vpc = vpc
            self._subnets = ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)
            return VpcPlacement(vpc, self._subnets, owned=True)
        return VpcPlacement(self._vpc, self._subnets or ec2.SubnetSelection(), owned=self._owns_vpc())

    def _owns_vpc(self) -> bool:
        return isinstance(self._vpc, ec2.Vpc) and self._vpc.node.scope is self

    def need_secrets_manager(self) -> None:
        """A function reads Secrets Manager: give the VPC we created an interface endpoint for it."""
        placement = self.placement()
        if placement is None or not placement.owned or self._secrets_endpoint is not None:
            return
        # HTTPS from inside the VPC only (a literal CIDR, so the rule is reviewable in the template).
        group = ec2.SecurityGroup(
            self, "SecretsManagerEndpoint", vpc=placement.vpc, allow_all_outbound=False,
            description="Secrets Manager endpoint: HTTPS from the VPC of the functions only",
        )
        group.add_ingress_rule(ec2.Peer.ipv4(VPC_CIDR), ec2.Port.tcp(443), "HTTPS from the VPC")
        self._secrets_endpoint = placement.vpc.add_interface_endpoint(
            "SecretsManager", service=ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
            subnets=placement.subnets, private_dns_enabled=True, open=False, security_groups=[group],
        )

    def for_function(self, scope: Construct, role: iam.Role) -> FunctionSettings:
        """The settings of a function built under ``scope`` with ``role``: the key for its log group
        and environment, and with ``lambda_in_vpc`` its placement, a security group with no inbound
        rule, and the role's network-interface policy (created here)."""
        placement = self.placement()
        if placement is None:
            return FunctionSettings(self.key(scope.node.path), None, None, None)
        # No inbound rule. Outbound leads only to the VPC's endpoints when the subnets are isolated.
        group = ec2.SecurityGroup(
            scope, "SecurityGroup", vpc=placement.vpc, allow_all_outbound=True,
            description=f"Function {scope.node.path}: no inbound traffic",
        )
        policy = iam.Policy(
            scope, "NetworkInterfaces", roles=[role],
            statements=[iam.PolicyStatement(actions=list(LAMBDA_VPC_ACTIONS), resources=["*"])],
        )
        nag.acknowledge_resource(policy, "AwsSolutions-IAM5[Resource::*]", nag.LAMBDA_VPC_NETWORK_INTERFACES)
        return FunctionSettings(self.key(scope.node.path), placement, group, policy)


@dataclass(frozen=True)
class FunctionSettings:
    """What :class:`Hardening` asks of one generated function (all None by default)."""

    key: kms.IKey | None
    placement: VpcPlacement | None
    security_group: ec2.SecurityGroup | None
    network_policy: iam.Policy | None


class _Defaults:
    """The settings of a stack that opted in to nothing (adds no construct to the stack)."""

    cmk_everywhere = False
    lambda_in_vpc = False

    def key(self, who: str) -> None:
        return None

    def placement(self) -> None:
        return None

    def need_secrets_manager(self) -> None:
        return None

    def for_function(self, scope: Construct, role: iam.Role) -> FunctionSettings:
        return FunctionSettings(None, None, None, None)


_DEFAULTS = _Defaults()


#: Stack → its settings, as :meth:`Hardening.of` found them (weakly held: an app's stacks go with it).
_SETTINGS: weakref.WeakKeyDictionary[cdk.Stack, Hardening | _Defaults] = weakref.WeakKeyDictionary()
