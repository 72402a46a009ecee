// Data-plane roles the Function App's identity needs on its host storage and on
// Application Insights: identity-based AzureWebJobsStorage (host leases and timers, the
// Durable Functions task hub in blobs, queues and tables, the deployment package) and
// Entra ID-authenticated telemetry. Each assignment is named guid(scope, principal, role),
// so a redeployment finds and keeps it.

@description('Host storage account of the Function App.')
param storageAccountName string

@description('Application Insights component the app sends telemetry to.')
param applicationInsightsName string

@description('Principal (object) id of the Function App\'s user-assigned identity.')
param principalId string

// Storage Blob Data Owner: host leases, timer schedules, Durable task hub blobs, deployment package.
var blobDataOwnerRole = 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
// Storage Queue Data Contributor: Durable Functions control and work-item queues.
var queueDataContributorRole = '974c5e8b-45b9-4653-ba55-5f855dd0fb88'
// Storage Table Data Contributor: Durable Functions history and instances tables.
var tableDataContributorRole = '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3'
// Monitoring Metrics Publisher: Entra ID authentication of telemetry (local auth is off).
var metricsPublisherRole = '3913510d-42f4-4e42-8a64-420c390055eb'

var storageRoles = [
  blobDataOwnerRole
  queueDataContributorRole
  tableDataContributorRole
]

resource storageAccount 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName
}

resource applicationInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: applicationInsightsName
}

resource storageAccess 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for role in storageRoles: {
  name: guid(storageAccount.id, principalId, role)
  scope: storageAccount
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}]

resource telemetryAccess 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(applicationInsights.id, principalId, metricsPublisherRole)
  scope: applicationInsights
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', metricsPublisherRole)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}
