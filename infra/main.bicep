// The order-processing app in one resource group: a Function App on Flex Consumption
// (Python 3.11) with a user-assigned managed identity, its host storage, monitoring, the
// Service Bus namespace with every queue of infra/queues.json plus, per client, a private
// reply queue and its own submit queue, and the Cosmos DB order database and state store;
// with durableBackend = 'DurableTaskScheduler', a Durable Task Scheduler and task hub in place
// of the storage account's task hub. Identity only: no key, SAS or connection string is
// created, read or output (SPEC X10). Every deployment passes main.parameters.json and the
// environment's own parameters file: a setting changed by hand is reset by the next one.
//
// Deploy: see docs/deploy.md ("Deploy to Azure").
targetScope = 'resourceGroup'

// ---------------------------------------------------------------- parameters

@description('Short environment name (dev, test, prod); part of every resource name.')
@minLength(2)
@maxLength(10)
param environmentName string

@description('Region of every resource; Flex Consumption must be offered there.')
param location string = resourceGroup().location

@description('A client application: it may send to its own submit queue and read its own reply queue.')
type clientAccess = {
  // 1-20 lower-case letters, digits or hyphens, alphanumeric at both ends (the client id rule
  // of orders/models/_types.py, ORDER_CLIENTS): its queues are orders-<clientId> and
  // replies-<clientId>, and its orders are keyed <clientId>~<OrderID> (at most 85 characters,
  // so every orchestration instance id stays within 100).
  clientId: string
  // Object (principal) id of the client's identity in Entra ID.
  principalId: string
  // ServicePrincipal (a managed identity or app registration), User or Group.
  principalType: string
}

@description('Client applications. Each gets the queues orders-<clientId> and replies-<clientId>, Azure Service Bus Data Sender on the first only and Data Receiver on the second only, and a submission trigger through the ORDER_CLIENTS app setting (SPEC S8, X10). Adding or removing a client changes ORDER_CLIENTS, which restarts the app (docs/deploy.md).')
param clients clientAccess[] = []

@description('Object id of the operators\' group or user: reads operator-alerts and the state store. Empty: none.')
param operatorPrincipalId string = ''

@description('Principal type of operatorPrincipalId: Group, User or ServicePrincipal.')
param operatorPrincipalType string = 'Group'

@description('Application (client) id of the operators\' Entra ID app registration (docs/deploy.md, "Operators: Entra ID sign-in"): App Service authentication then fronts the app and the dashboard takes the operator from the signed-in principal; resubmitting needs its app role Orders.Operator. Empty: no authentication, and the app refuses its operations routes in Azure.')
param operatorsAppClientId string = ''

@description('Object id of a developer who runs the app with Core Tools against these resources (dev only). Empty: none.')
param developerPrincipalId string = ''

@description('Base URL of each remote service of infra/services.json, keyed by the service\'s urlSetting ({"PAYMENT_API_URL": "https://...", "SHIPPING_API_URL": "https://..."}): each becomes that app setting, which its agent calls (tests/infra checks every service has one).')
param serviceUrls object

@description('NCRONTAB (six fields, with seconds) of the starter timer trigger (SPEC S3).')
param starterSchedule string = '*/10 * * * * *'

@description('NCRONTAB of the supervisor timer trigger; bounds the detection delay of an expired CompleteBy (SPEC V5).')
param supervisorSchedule string = '*/30 * * * * *'

@description('NCRONTAB of the ops snapshot timer (backlog and dead-letter metrics, SPEC X8).')
param opsSnapshotSchedule string = '0 */1 * * * *'

@description('NCRONTAB of the retention timer: deletes compensation log entries past their retainUntil (SPEC S9, X10).')
param retentionSchedule string = '0 7 * * * *'

@description('Also give the app\'s identity Azure Service Bus Data Owner (Manage) on the queues it does not trigger on (it always has it on its trigger queues, for scale-out), so the ops summary can read every dead-letter depth; off by default (least privilege: the depth then shows as unavailable and the DeadletteredMessages metric is the place to alert).')
param appReadsDeadLetterDepth bool = false

@description('The app\'s tuning settings (orders/settings.py; names and rules in docs/deploy.md, "App settings"), string values, e.g. {"MAX_FAILURES": "3", "WORKFLOW_VERSION": "7", ...}. No default: infra/main.parameters.json holds them, so every deployment (the first, a redeploy, an onboarding) writes the same values, and a value changed there survives the next one. Never change one with az functionapp config appsettings set: the next deployment puts the file\'s value back.')
param orderSettings object

@description('App settings that override everything above (string values), for a setting the parameters do not cover. Keep them in the parameters file too.')
param appSettingOverrides object = {}

@description('Durable Functions storage backend: AzureStorage (the host storage account\'s queues, tables and blobs) or DurableTaskScheduler (a managed scheduler and task hub). Switching moves no running instance: drain first (docs/deploy.md, "Durable backend").')
@allowed([
  'AzureStorage'
  'DurableTaskScheduler'
])
param durableBackend string = 'AzureStorage'

@description('Durable Task Scheduler SKU when durableBackend is DurableTaskScheduler: Consumption or Dedicated.')
@allowed([
  'Consumption'
  'Dedicated'
])
param durableTaskSchedulerSku string = 'Consumption'

@description('Capacity units of the Dedicated Durable Task Scheduler SKU.')
@minValue(1)
param durableTaskSchedulerCapacity int = 1

@description('Flex Consumption: most instances the app scales out to, counted per scale group (the http group, the durable group and each other trigger\'s own group each scale to it). 40 to 1000: Learn\'s pages disagree on values below 40, so the lowest every version accepts is the floor (docs/deploy.md, "Scale-out").')
@minValue(40)
@maxValue(1000)
param maximumInstanceCount int = 40

@description('Flex Consumption: memory of one instance in MB (2048 or 4096).')
param instanceMemoryMB int = 2048

@description('Flex Consumption: always-ready (pre-provisioned, billed while idle) instances of the durable group, so orchestrations never wait for a cold start. 0 turns them off.')
@minValue(0)
@maxValue(10)
param durableAlwaysReadyCount int = 1

@description('Flex Consumption: always-ready instances of each scale group an order\'s deadline waits on besides durable: every agent\'s Service Bus trigger and the reply router (each trigger is its own group, function:<name>). Billed while idle; 0 turns them off (a first message may then wait for a cold start, docs/deploy.md, "Warm instances").')
@minValue(0)
@maxValue(10)
param deadlineAlwaysReadyCount int = 1

@description('Cosmos DB serverless (dev, bursty load) instead of provisioned autoscale throughput.')
param cosmosServerless bool = true

// ---------------------------------------------------------------- names

var resourceToken = toLower(uniqueString(subscription().id, resourceGroup().id, environmentName))
var tags = {
  application: 'sas-orders'
  environment: environmentName
}
var functionAppName = 'func-orders-${environmentName}-${take(resourceToken, 6)}'
var deploymentContainerName = 'app-package'
var cosmosDatabaseName = 'orders'
// The ORDER_CLIENTS app setting: one submission trigger per client (scheduler/blueprint.py).
var clientIds = [for client in clients: toLower(client.clientId)]
// One host.json for both backends: the task hub is the one it names.
var taskHubName = loadJsonContent('../host.json').extensions.durableTask.hubName
// The Service Bus triggers an order's CompleteBy waits on, as Flex Consumption names their
// scale groups: each agent (<service>_agent, agents/blueprint.py) and the reply router.
var agentGroups = [for service in objectKeys(loadJsonContent('services.json').services): concat('function:', service, '_agent')]
var deadlineGroups = concat(agentGroups, [
  'function:route_agent_reply'
])
var useScheduler = (durableBackend == 'DurableTaskScheduler')

// ---------------------------------------------------------------- identity and hosting

// The app's identity: every data-plane call (storage, Service Bus, Cosmos DB, App Insights) uses it.
module identity 'br/public:avm/res/managed-identity/user-assigned-identity:0.4.1' = {
  name: 'orders-identity'
  params: {
    name: 'id-orders-${environmentName}'
    location: location
    tags: tags
  }
}

module plan 'br/public:avm/res/web/serverfarm:0.1.1' = {
  name: 'orders-plan'
  params: {
    name: 'plan-orders-${environmentName}'
    location: location
    tags: tags
    reserved: true
    sku: {
      name: 'FC1'
      tier: 'FlexConsumption'
    }
  }
}

// Host storage (AzureWebJobsStorage: leases, timers, the Durable Functions task hub) and
// the deployment package container. Shared-key access is off: identity only.
module storage 'br/public:avm/res/storage/storage-account:0.8.3' = {
  name: 'orders-storage'
  params: {
    name: 'storders${resourceToken}'
    location: location
    tags: tags
    skuName: 'Standard_LRS'
    allowSharedKeyAccess: false
    allowBlobPublicAccess: false
    minimumTlsVersion: 'TLS1_2'
    dnsEndpointType: 'Standard'
    publicNetworkAccess: 'Enabled'
    networkAcls: {
      defaultAction: 'Allow'
      bypass: 'AzureServices'
    }
    blobServices: {
      containers: [
        {
          name: deploymentContainerName
        }
      ]
    }
  }
}

module logAnalytics 'br/public:avm/res/operational-insights/workspace:0.11.1' = {
  name: 'orders-logAnalytics'
  params: {
    name: 'log-orders-${environmentName}'
    location: location
    tags: tags
    dataRetention: 30
  }
}

// Local (instrumentation key) authentication off: telemetry is sent with the app's identity.
module appInsights 'br/public:avm/res/insights/component:0.6.0' = {
  name: 'orders-appInsights'
  params: {
    name: 'appi-orders-${environmentName}'
    location: location
    tags: tags
    workspaceResourceId: logAnalytics.outputs.resourceId
    disableLocalAuth: true
  }
}

module hostAccess './app/rbac.bicep' = {
  name: 'orders-hostAccess'
  params: {
    storageAccountName: storage.outputs.name
    applicationInsightsName: appInsights.outputs.name
    principalId: identity.outputs.principalId
  }
}

// ---------------------------------------------------------------- messaging and data

module serviceBus './app/servicebus.bicep' = {
  name: 'orders-serviceBus'
  params: {
    name: 'sb-orders-${resourceToken}'
    location: location
    tags: tags
    appPrincipalId: identity.outputs.principalId
    clients: clients
    operatorPrincipalId: operatorPrincipalId
    operatorPrincipalType: operatorPrincipalType
    developerPrincipalId: developerPrincipalId
    appReadsDeadLetterDepth: appReadsDeadLetterDepth
  }
}

module cosmosDb './app/cosmos.bicep' = {
  name: 'orders-cosmos'
  params: {
    name: 'cosmos-orders-${resourceToken}'
    location: location
    tags: tags
    databaseName: cosmosDatabaseName
    serverless: cosmosServerless
    appPrincipalId: identity.outputs.principalId
    operatorPrincipalId: operatorPrincipalId
    developerPrincipalId: developerPrincipalId
  }
}

// The Durable Task Scheduler backend, only when chosen (durableBackend).
module durableTaskScheduler './app/durable-task-scheduler.bicep' = if (useScheduler) {
  name: 'orders-durableTaskScheduler'
  params: {
    name: 'dts-orders-${resourceToken}'
    location: location
    tags: tags
    skuName: durableTaskSchedulerSku
    dedicatedCapacity: durableTaskSchedulerCapacity
    taskHubName: taskHubName
    appPrincipalId: identity.outputs.principalId
    appClientId: identity.outputs.clientId
    operatorPrincipalId: operatorPrincipalId
    operatorPrincipalType: operatorPrincipalType
  }
}

// ---------------------------------------------------------------- the app

module functionApp './app/function-app.bicep' = {
  name: 'orders-functionApp'
  params: {
    name: functionAppName
    location: location
    tags: tags
    planId: plan.outputs.resourceId
    identityId: identity.outputs.resourceId
    identityClientId: identity.outputs.clientId
    storageAccountName: storage.outputs.name
    deploymentContainerName: deploymentContainerName
    applicationInsightsName: appInsights.outputs.name
    maximumInstanceCount: maximumInstanceCount
    instanceMemoryMB: instanceMemoryMB
    durableAlwaysReadyCount: durableAlwaysReadyCount
    deadlineAlwaysReadyCount: deadlineAlwaysReadyCount
    deadlineGroups: deadlineGroups
    operatorsAppClientId: operatorsAppClientId
    // Every setting orders/settings.py and the function metadata read (same names as in
    // local.settings.json; tests/infra checks both). The host's own settings
    // (AzureWebJobsStorage__*, APPLICATIONINSIGHTS_*) are added in app/function-app.bicep.
    // Then, when durableBackend chooses it, the Durable Task Scheduler's; then the tuning
    // (deadlines, batches, retry budget, workflow version, thread pool: the parameters
    // file's orderSettings); then one URL setting per remote service; then any overrides.
    appSettings: union({
      // Backends: the Azure adapters.
      STORE_BACKEND: 'cosmos'
      COSMOS_ENDPOINT: cosmosDb.outputs.endpoint
      COSMOS_DATABASE: cosmosDatabaseName
      MESSAGING_BACKEND: 'servicebus'
      // Identity-based connection "SERVICEBUS" of every Service Bus trigger; the app's
      // sender reads the same namespace setting.
      SERVICEBUS__fullyQualifiedNamespace: serviceBus.outputs.fullyQualifiedNamespace
      SERVICEBUS__credential: 'managedidentity'
      SERVICEBUS__clientId: identity.outputs.clientId
      // DefaultAzureCredential (Cosmos DB client, Service Bus sender) picks the
      // user-assigned identity by this client id.
      AZURE_CLIENT_ID: identity.outputs.clientId
      // Client applications, comma-separated: one submission trigger on orders-<clientId>
      // each, registered when the app starts (a change restarts it).
      ORDER_CLIENTS: join(clientIds, ',')
      // Timer trigger schedules (%NAME% expressions in the function metadata).
      STARTER_SCHEDULE: starterSchedule
      SUPERVISOR_SCHEDULE: supervisorSchedule
      OPS_SNAPSHOT_SCHEDULE: opsSnapshotSchedule
      RETENTION_SCHEDULE: retentionSchedule
    }, useScheduler ? {
      // The host's storage provider, chosen by app settings so one host.json serves both
      // backends (AzureFunctionsJobHost__ overrides; docs/deploy.md, "Durable backend").
      AzureFunctionsJobHost__extensions__durableTask__storageProvider__type: 'azureManaged'
      AzureFunctionsJobHost__extensions__durableTask__storageProvider__connectionStringName: 'DURABLE_TASK_SCHEDULER_CONNECTION_STRING'
      DURABLE_TASK_SCHEDULER_CONNECTION_STRING: durableTaskScheduler.outputs.connectionString
    } : {}, orderSettings, serviceUrls, appSettingOverrides)
  }
}

// ---------------------------------------------------------------- outputs
// Named like the app settings they feed, so a shell or local.settings.json can take them as they are.

output AZURE_RESOURCE_GROUP string = resourceGroup().name
output AZURE_FUNCTION_APP_NAME string = functionApp.outputs.name
output AZURE_CLIENT_ID string = identity.outputs.clientId
output COSMOS_ENDPOINT string = cosmosDb.outputs.endpoint
output COSMOS_DATABASE string = cosmosDatabaseName
output SERVICEBUS__fullyQualifiedNamespace string = serviceBus.outputs.fullyQualifiedNamespace
output CLIENT_REPLY_QUEUES array = serviceBus.outputs.clientReplyQueues
output CLIENT_SUBMIT_QUEUES array = serviceBus.outputs.clientSubmitQueues
