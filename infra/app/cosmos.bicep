// Cosmos DB for the order database, the state store, the compensation log and the
// inventory (SPEC S2, S9, X4): one account with key (local) authentication off, so only
// Entra ID identities reach the data; one database with the four containers
// orders/stores/factory.py opens ("orders", "states", "compensation", "inventory"), the
// first three partitioned on /orderId (orders/stores/_cosmos.py PARTITION_KEY_PATH), the
// inventory on /sku (orders/stores/cosmos_inventory.py PARTITION_KEY_PATH). The app's
// identity gets "Cosmos DB Built-in Data Contributor" on the database through a
// data-plane sqlRoleAssignment; with data-plane RBAC it cannot create containers, which is
// why they are created here.
//
// Indexing follows the queries in orders/stores/cosmos_state.py:
//   starter:    processState = @pending AND IS_NULL(lockedBy)
//               AND (IS_NULL(notBefore) OR notBefore <= @now)
//   supervisor: processState IN (...) AND completeBy >= @low AND completeBy < @high
//               and, for records older than its window, processState IN (...)
//               AND completeBy < @high
//   counts:     processState = @state
// Only those four paths are indexed (every other path is excluded: fewer write RUs, and
// customer data is not copied into the index). The composite index
// (processState, completeBy) serves both of the supervisor's equality-plus-range filters; the
// starter's filter is served by the range indexes on its three paths (its OR and IS_NULL
// terms cannot use a composite index). The orders container is only point-read by id and
// partition key, so it indexes nothing. The compensation log (orders/stores/
// cosmos_compensation.py) is read per order (orderId = @pk) and purged by retainUntil; its
// items carry their own ttl (the retention of the data they track, SPEC S9), which Cosmos DB
// honours because time-to-live is on (defaultTtl -1: no expiry unless an item sets ttl).
// The inventory (one item per SKU, orders/stores/cosmos_inventory.py) is point-read and
// replaced by id and partition key, and listed whole without a filter, so it indexes nothing.

param name string
param location string
param tags object

@description('Database holding the containers (the COSMOS_DATABASE setting).')
param databaseName string

@description('Serverless capacity (no throughput to provision) instead of autoscale.')
param serverless bool

@description('Principal id of the Function App\'s identity.')
param appPrincipalId string

@description('Operators\' principal id (read access to find stuck and failed orders), or empty.')
param operatorPrincipalId string

@description('Developer\'s principal id (Core Tools against Azure, dev only), or empty.')
param developerPrincipalId string

// Cosmos DB Built-in Data Contributor (data-plane role of the SQL API)
var dataContributorRole = '00000000-0000-0000-0000-000000000002'
// Cosmos DB Built-in Data Reader (data-plane role of the SQL API)
var dataReaderRole = '00000000-0000-0000-0000-000000000001'

var partitionKey = {
  paths: [
    '/orderId'
  ]
  kind: 'Hash'
  version: 2
}

var skuPartitionKey = {
  paths: [
    '/sku'
  ]
  kind: 'Hash'
  version: 2
}

// Provisioned accounts: autoscale per container; serverless accounts take no throughput.
var containerOptions = serverless ? {} : {
  autoscaleSettings: {
    maxThroughput: 1000
  }
}

resource account 'Microsoft.DocumentDB/databaseAccounts@2024-05-15' = {
  name: name
  location: location
  tags: tags
  kind: 'GlobalDocumentDB'
  properties: {
    databaseAccountOfferType: 'Standard'
    disableLocalAuth: true
    disableKeyBasedMetadataWriteAccess: true
    minimalTlsVersion: 'Tls12'
    publicNetworkAccess: 'Enabled'
    consistencyPolicy: {
      defaultConsistencyLevel: 'Session'
    }
    locations: [
      {
        locationName: location
        failoverPriority: 0
        isZoneRedundant: false
      }
    ]
    capabilities: serverless ? [
      {
        name: 'EnableServerless'
      }
    ] : []
  }
}

resource database 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases@2024-05-15' = {
  parent: account
  name: databaseName
  properties: {
    resource: {
      id: databaseName
    }
  }
}

resource statesContainer 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-05-15' = {
  parent: database
  name: 'states'
  properties: {
    resource: {
      id: 'states'
      partitionKey: partitionKey
      indexingPolicy: {
        indexingMode: 'consistent'
        automatic: true
        includedPaths: [
          {
            path: '/processState/?'
          }
          {
            path: '/lockedBy/?'
          }
          {
            path: '/notBefore/?'
          }
          {
            path: '/completeBy/?'
          }
          {
            // The per-client in-flight quota and the starter's per-client claims (SPEC X3).
            path: '/clientId/?'
          }
          {
            // The dashboard's newest-first lists and charts (SPEC S7, X8).
            path: '/updatedAt/?'
          }
          {
            // Single-order reads filter c.orderId = @pk beside the partition key, and the
            // slots count excludes its own document with c.orderId != @slots.
            path: '/orderId/?'
          }
        ]
        excludedPaths: [
          {
            path: '/*'
          }
        ]
        compositeIndexes: [
          [
            {
              path: '/processState'
              order: 'ascending'
            }
            {
              path: '/completeBy'
              order: 'ascending'
            }
          ]
          [
            {
              path: '/processState'
              order: 'ascending'
            }
            {
              path: '/updatedAt'
              order: 'descending'
            }
          ]
        ]
      }
    }
    options: containerOptions
  }
}

resource ordersContainer 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-05-15' = {
  parent: database
  name: 'orders'
  properties: {
    resource: {
      id: 'orders'
      partitionKey: partitionKey
      indexingPolicy: {
        indexingMode: 'consistent'
        automatic: true
        includedPaths: []
        excludedPaths: [
          {
            path: '/*'
          }
        ]
      }
    }
    options: containerOptions
  }
}

resource compensationContainer 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-05-15' = {
  parent: database
  name: 'compensation'
  properties: {
    resource: {
      id: 'compensation'
      partitionKey: partitionKey
      defaultTtl: -1
      indexingPolicy: {
        indexingMode: 'consistent'
        automatic: true
        includedPaths: [
          {
            path: '/orderId/?'
          }
          {
            path: '/retainUntil/?'
          }
        ]
        excludedPaths: [
          {
            path: '/*'
          }
        ]
      }
    }
    options: containerOptions
  }
}

resource inventoryContainer 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-05-15' = {
  parent: database
  name: 'inventory'
  properties: {
    resource: {
      id: 'inventory'
      partitionKey: skuPartitionKey
      indexingPolicy: {
        indexingMode: 'consistent'
        automatic: true
        includedPaths: []
        excludedPaths: [
          {
            path: '/*'
          }
        ]
      }
    }
    options: containerOptions
  }
}

// Data-plane role assignments are scoped to the database (not the whole account). Cosmos DB
// refuses a role-assignment write while another one on the same account is in progress
// (412 "another user operation in progress which requires an exclusive lock"), so they are
// written one after another: each depends directly on every earlier one (ARM drops a skipped,
// condition-false resource from dependsOn, so a chain through it would not keep the order).
// tests/infra/test_first_deployment.py checks this.
var databaseScope = '${account.id}/dbs/${databaseName}'

resource appDataAccess 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-05-15' = {
  parent: account
  name: guid(databaseScope, appPrincipalId, dataContributorRole)
  properties: {
    roleDefinitionId: '${account.id}/sqlRoleDefinitions/${dataContributorRole}'
    principalId: appPrincipalId
    scope: databaseScope
  }
  dependsOn: [
    database
  ]
}

resource operatorDataAccess 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-05-15' = if (!empty(operatorPrincipalId)) {
  parent: account
  name: guid(databaseScope, operatorPrincipalId, dataReaderRole)
  properties: {
    roleDefinitionId: '${account.id}/sqlRoleDefinitions/${dataReaderRole}'
    principalId: operatorPrincipalId
    scope: databaseScope
  }
  dependsOn: [
    database
    appDataAccess
  ]
}

resource developerDataAccess 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-05-15' = if (!empty(developerPrincipalId)) {
  parent: account
  name: guid(databaseScope, developerPrincipalId, dataContributorRole)
  properties: {
    roleDefinitionId: '${account.id}/sqlRoleDefinitions/${dataContributorRole}'
    principalId: developerPrincipalId
    scope: databaseScope
  }
  dependsOn: [
    database
    appDataAccess
    operatorDataAccess
  ]
}

@description('Account endpoint, https://<account>.documents.azure.com:443/ (the COSMOS_ENDPOINT setting).')
output endpoint string = account.properties.documentEndpoint

output accountName string = account.name
