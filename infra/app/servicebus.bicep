// Service Bus for the order pipeline: the namespace (Standard: duplicate detection needs
// it; local auth off, so only Entra ID identities can send or receive), every queue of
// infra/queues.json with its merged properties (the one source shared with the local host),
// per client a private reply queue (SPEC S8) and its own submit queue (X10), and the
// data-plane roles:
//   - the app's identity: Data Sender and Data Receiver on the namespace (it triggers on
//     the request, reply and submit queues and sends to the others and to every client's
//     reply queue), and Data Owner on each queue it triggers on, only there: the Functions
//     scale controller reads a trigger queue's length through the administration API, which
//     needs the Manage right; with Listen alone target-based scaling falls back to
//     incremental scaling ("Target-based scaling", Service Bus section, Azure Functions
//     docs). With appReadsDeadLetterDepth, Data Owner on every queue of queues.json (the
//     ops summary reads all their dead-letter depths), still never on the namespace;
//   - each client: Data Sender on its own submit queue orders-<clientId> only and Data
//     Receiver on its own reply queue replies-<clientId> only. The submit queue is the
//     client's identity: Service Bus cannot tie a field of a message body to its sender, so
//     the app takes the client id from the queue (scheduler/identity.py). The shared orders
//     queue takes no orders any more: no client may send there; the app dead-letters what
//     still arrives (UseClientQueue);
//   - operators (optional): Data Receiver on operator-alerts and on dead-letters (where the
//     app forwards what it dead-letters, with the reason: orders/messaging/settlement.py);
//   - a developer (optional, dev only): Data Sender and Data Receiver on the namespace.
// Role assignments are named guid(scope, principal, role).

@description('Namespace name, globally unique, 6-50 characters.')
param name string

param location string
param tags object

@description('Principal id of the Function App\'s identity.')
param appPrincipalId string

@description('Client applications: { clientId, principalId, principalType } each.')
param clients array

@description('Operators\' principal id, or empty.')
param operatorPrincipalId string

@description('Principal type of operatorPrincipalId.')
param operatorPrincipalType string

@description('Developer\'s principal id (Core Tools against Azure, watch from a shell), or empty.')
param developerPrincipalId string

@description('Also give the app Data Owner on the queues it does not trigger on: the ops summary then reads every dead-letter depth.')
param appReadsDeadLetterDepth bool

// The one source of queue properties (also read by azurekit/queues.py).
var queueFile = loadJsonContent('../queues.json')

// orders/names.py ORDERS_QUEUE: the shared submission queue of earlier versions; the app
// still triggers on it, to dead-letter what arrives (UseClientQueue), and no client sends.
var submissionQueue = 'orders'
// orders/names.py OPERATOR_ALERTS_QUEUE: operators read alerts here (SPEC S7).
var operatorAlertsQueue = 'operator-alerts'
// orders/messaging/settlement.py DEAD_LETTERS_QUEUE: each message the app dead-letters in
// Azure, forwarded with DeadLetterReason and DeadLetterErrorDescription (SPEC S1).
var deadLettersQueue = 'dead-letters'

// The one source of remote services (also read by azurekit/services.py): one agent, so
// one trigger, per service on its request queue (agents/blueprint.py).
var serviceFile = loadJsonContent('../services.json')
var requestQueues = [for service in objectKeys(serviceFile.services): serviceFile.services[service].requestQueue]

// The queues of queues.json the app's Service Bus triggers listen on (scheduler/blueprint.py,
// agents/blueprint.py), besides one submit queue per client (submitQueues below);
// tests/infra checks both against the function metadata.
var triggerQueues = concat([
  submissionQueue
  'agent-replies'
], requestQueues)

// Queues on which the app holds the Manage right.
var appOwnedQueues = appReadsDeadLetterDepth ? objectKeys(queueFile.queues) : triggerQueues

// Azure Service Bus Data Sender
var dataSenderRole = '69a216fc-b8fb-44d8-bc22-1f3c2cd27a39'
// Azure Service Bus Data Receiver
var dataReceiverRole = '4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0'
// Azure Service Bus Data Owner
var dataOwnerRole = '090c5cfd-751d-490a-894a-3ce6f1109419'

var namespaceRoles = [
  dataSenderRole
  dataReceiverRole
]

resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: name
  location: location
  tags: tags
  sku: {
    name: 'Standard'
    tier: 'Standard'
  }
  properties: {
    disableLocalAuth: true
    minimumTlsVersion: '1.2'
  }
}

// Defaults merged with each queue's overrides, exactly as the local host merges them.
resource queues 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = [for queue in items(queueFile.queues): {
  parent: namespace
  name: queue.key
  properties: union(queueFile.defaults, queue.value)
}]

// One private reply queue per client: replies-<clientId> (clientReplyQueues.namePattern).
resource replyQueues 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = [for client in clients: {
  parent: namespace
  name: replace(queueFile.clientReplyQueues.namePattern, '{clientId}', toLower(client.clientId))
  properties: union(queueFile.defaults, queueFile.clientReplyQueues.properties)
}]

// One submit queue per client: orders-<clientId> (clientSubmitQueues.namePattern); the app
// registers one trigger per client on it from the ORDER_CLIENTS setting (main.bicep).
resource submitQueues 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = [for client in clients: {
  parent: namespace
  name: replace(queueFile.clientSubmitQueues.namePattern, '{clientId}', toLower(client.clientId))
  properties: union(queueFile.defaults, queueFile.clientSubmitQueues.properties)
}]

resource alertsQueue 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' existing = {
  parent: namespace
  name: operatorAlertsQueue
}

resource forwardedDeadLetters 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' existing = {
  parent: namespace
  name: deadLettersQueue
}

resource appAccess 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for role in namespaceRoles: {
  name: guid(namespace.id, appPrincipalId, role)
  scope: namespace
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}]

resource appOwnedQueueRefs 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' existing = [for queue in appOwnedQueues: {
  parent: namespace
  name: queue
}]

// The Manage right on each owned queue, scoped to that queue: scale-out reads the trigger
// queues' length (queue runtime properties), the ops summary their dead-letter depth.
resource appQueueOwnerAccess 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for (queue, i) in appOwnedQueues: {
  name: guid(appOwnedQueueRefs[i].id, appPrincipalId, dataOwnerRole)
  scope: appOwnedQueueRefs[i]
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', dataOwnerRole)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
  dependsOn: [
    queues
  ]
}]

// The Manage right on each client's submit queue too: the app triggers on it (scale-out).
resource appSubmitQueueOwnerAccess 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for (client, i) in clients: {
  name: guid(submitQueues[i].id, appPrincipalId, dataOwnerRole)
  scope: submitQueues[i]
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', dataOwnerRole)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}]

// A client receives on its own reply queue only: the role is scoped to that queue.
resource clientReplyAccess 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for (client, i) in clients: {
  name: guid(replyQueues[i].id, client.principalId, dataReceiverRole)
  scope: replyQueues[i]
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', dataReceiverRole)
    principalId: client.principalId
    principalType: client.principalType
  }
}]

// A client sends orders to its own submit queue only: Data Sender scoped to that queue, so
// the queue a message arrives on names its client (SPEC X10).
resource clientSubmitAccess 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for (client, i) in clients: {
  name: guid(submitQueues[i].id, client.principalId, dataSenderRole)
  scope: submitQueues[i]
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', dataSenderRole)
    principalId: client.principalId
    principalType: client.principalType
  }
}]

resource operatorAlertsAccess 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(operatorPrincipalId)) {
  name: guid(alertsQueue.id, operatorPrincipalId, dataReceiverRole)
  scope: alertsQueue
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', dataReceiverRole)
    principalId: operatorPrincipalId
    principalType: operatorPrincipalType
  }
  dependsOn: [
    queues
  ]
}

// Operators read what the app dead-lettered (python -m opscli, peek without locking).
resource operatorDeadLettersAccess 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(operatorPrincipalId)) {
  name: guid(forwardedDeadLetters.id, operatorPrincipalId, dataReceiverRole)
  scope: forwardedDeadLetters
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', dataReceiverRole)
    principalId: operatorPrincipalId
    principalType: operatorPrincipalType
  }
  dependsOn: [
    queues
  ]
}

resource developerSendAccess 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(developerPrincipalId)) {
  name: guid(namespace.id, developerPrincipalId, dataSenderRole)
  scope: namespace
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', dataSenderRole)
    principalId: developerPrincipalId
    principalType: 'User'
  }
}

resource developerReceiveAccess 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(developerPrincipalId)) {
  name: guid(namespace.id, developerPrincipalId, dataReceiverRole)
  scope: namespace
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', dataReceiverRole)
    principalId: developerPrincipalId
    principalType: 'User'
  }
}

@description('Host name of the namespace, <name>.servicebus.windows.net (the SERVICEBUS__fullyQualifiedNamespace setting).')
output fullyQualifiedNamespace string = replace(replace(namespace.properties.serviceBusEndpoint, 'https://', ''), ':443/', '')

@description('Reply queue of each client, in the order of the clients parameter.')
output clientReplyQueues array = [for client in clients: replace(queueFile.clientReplyQueues.namePattern, '{clientId}', toLower(client.clientId))]

@description('Submit queue of each client, in the order of the clients parameter.')
output clientSubmitQueues array = [for client in clients: replace(queueFile.clientSubmitQueues.namePattern, '{clientId}', toLower(client.clientId))]
