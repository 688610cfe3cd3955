// Evaluates IAM requests against identity policies with @cloud-copilot/iam-simulate.
// stdin: {"cases": [{"policies": [<policy document>], "principal": arn, "principal_tags": {k: v},
//          "action": "dynamodb:Query", "resource": arn, "context": {key: value}}]}
// stdout: {"decisions": [{"result": "Allowed" | "ImplicitlyDenied" | "ExplicitlyDenied" | null,
//          "errors": <validation errors> | null, "ignored": [context keys the engine ignored]}]}
import { runSimulation } from '@cloud-copilot/iam-simulate'

const chunks = []
for await (const chunk of process.stdin) chunks.push(chunk)
const { cases } = JSON.parse(Buffer.concat(chunks).toString('utf8'))
const decisions = []
for (const c of cases) {
  const context = { ...(c.context || {}) }
  for (const [k, v] of Object.entries(c.principal_tags || {})) context[`aws:PrincipalTag/${k}`] = v
  const simulation = {
    identityPolicies: c.policies.map((policy, i) => ({ name: `policy${i}`, policy })),
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    request: {
      action: c.action,
      principal: c.principal,
      resource: { resource: c.resource, accountId: c.account },
      contextVariables: context,
    },
  }
  const out = await runSimulation(simulation, {})
  if (out.resultType === 'error') {
    decisions.push({ result: null, errors: out.errors, ignored: [] })
  } else {
    decisions.push({ result: out.overallResult, errors: null, ignored: out.result?.ignoredContextKeys ?? [] })
  }
}
process.stdout.write(JSON.stringify({ decisions }))
