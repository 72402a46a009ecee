// The Durable Task Scheduler backend (durableBackend = 'DurableTaskScheduler' in main.bicep):
// a scheduler with one task hub named as host.json's hubName, the app's identity as
// "Durable Task Data Contributor" on that task hub only, and operators as "Durable Task
// Data Reader" on it (the dashboard). The app reaches it with its identity: the connection
// string names the identity's client id, never a key (SPEC X10). Why and when to choose
// it, its limits and the switch: docs/deploy.md, "Durable backend".

@description('Scheduler name: 3-64 letters, digits or hyphens.')
param name string
param location string
param tags object

@description('Scheduler SKU: Consumption (pay per action; 500 actions/s, 30-day retention) or Dedicated (capacity units).')
@allowed([
  'Consumption'
  'Dedicated'
])
param skuName string

@description('Capacity units of the Dedicated SKU (ignored by Consumption).')
@minValue(1)
param dedicatedCapacity int

@description('Task hub name: host.json\'s extensions.durableTask.hubName (3-64 letters, digits or hyphens).')
param taskHubName string

@description('Principal (object) id of the app\'s user-assigned identity.')
param appPrincipalId string

@description('Client id of that identity: the connection string authenticates as it.')
param appClientId string

@description('Object id of the operators\' group or user: Durable Task Data Reader on the task hub (the dashboard). Empty: none.')
param operatorPrincipalId string

@description('Principal type of operatorPrincipalId: Group, User or ServicePrincipal.')
param operatorPrincipalType string

// Every data operation the Functions host performs on a task hub (Learn: "Configure
// managed identity for Durable Task Scheduler"): Durable Task Data Contributor.
var dataContributorRole = '0ad04412-c4d5-4796-b79c-f76d14c8d402'
// Read orchestrations and entities, as the dashboard shows them with their inputs and
// outputs: Durable Task Data Reader.
var dataReaderRole = 'd6a5505f-6ebb-45a4-896e-ac8274cfc0ac'

resource scheduler 'Microsoft.DurableTask/schedulers@2025-11-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    // Every address (a Flex Consumption app has no fixed outbound address); every call
    // still needs an Entra ID token holding a role on the task hub.
    ipAllowlist: [
      '0.0.0.0/0'
    ]
    sku: (skuName == 'Dedicated') ? {
      name: skuName
      capacity: dedicatedCapacity
    } : {
      name: skuName
    }
  }
}

resource taskHub 'Microsoft.DurableTask/schedulers/taskHubs@2025-11-01' = {
  parent: scheduler
  name: taskHubName
}

resource appAccess 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(taskHub.id, appPrincipalId, dataContributorRole)
  scope: taskHub
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', dataContributorRole)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}

resource operatorAccess 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(operatorPrincipalId)) {
  name: guid(taskHub.id, operatorPrincipalId, dataReaderRole)
  scope: taskHub
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', dataReaderRole)
    principalId: operatorPrincipalId
    principalType: operatorPrincipalType
  }
}

// The value of the app setting the host's azureManaged provider reads (connectionStringName):
// the scheduler's endpoint and the identity to authenticate as. Not a secret.
output connectionString string = 'Endpoint=${scheduler.properties.endpoint};Authentication=ManagedIdentity;ClientID=${appClientId}'
output taskHubName string = taskHub.name
output dashboardUrl string = taskHub.properties.dashboardUrl
